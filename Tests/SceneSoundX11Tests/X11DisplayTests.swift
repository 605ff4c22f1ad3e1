import SceneSoundTestSupport
import Testing

/// Every test that runs an X server, one at a time (the trait reaches the nested suites): two
/// Xvfb servers, window managers and bursts of xdotool at once on a 2-core machine would blur
/// the timings the coalescing test measures.
@Suite(.serialized) enum X11DisplayTests {}
