import SceneSoundCLI

// `scenesound`, the command line; its verbs live in SceneSoundCLI.
SceneSoundCLI.run(arguments: Array(CommandLine.arguments.dropFirst()))
