#!/usr/bin/env python3
"""Plays a sine tone on the SceneSound server with the pure-Python client, then prints the
server's status. Shows the handshake, a stream with credit flow control, drain and status.

  play_tone.py [--socket PATH] [--frequency HZ] [--seconds S] [--scene ID] [--azimuth DEG]
"""
import argparse
import json
import math
import struct
import time

from scenesound_client import Client


def tone(frequency_hz, seconds, rate_hz):
    """Stereo s16le, 0.3 of full scale, with 5 ms fades so it starts and stops without clicks."""
    frames = int(seconds * rate_hz)
    fade = int(0.005 * rate_hz)
    out = bytearray()
    for i in range(frames):
        gain = min(1.0, i / fade, (frames - 1 - i) / fade)
        value = int(0.3 * 32767 * gain * math.sin(2 * math.pi * frequency_hz * i / rate_hz))
        out += struct.pack("<hh", value, value)
    return bytes(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket")
    parser.add_argument("--frequency", type=float, default=660.0)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--scene", default="python-tone")
    parser.add_argument("--azimuth", type=float, default=30.0)
    args = parser.parse_args()

    client = Client(args.socket, name="play_tone.py")
    welcome = client.welcome
    print(f"connected to {welcome['server_name']} (protocol {welcome['version']}, {welcome['sample_rate_hz']} Hz)")
    client.request("SCENE_PLACE", scene_id=args.scene, azimuth_degrees=args.azimuth,
                   elevation_degrees=0.0, distance_metres=1.5)
    rate_hz = 48000
    stream = client.open_stream(sample_format="s16le", channels=2, rate_hz=rate_hz, scene_id=args.scene)
    started = time.monotonic()
    stream.write(tone(args.frequency, args.seconds, rate_hz))
    stream.drain()
    print(f"played {args.frequency:g} Hz for {args.seconds:g} s at azimuth {args.azimuth:g} "
          f"(drained after {time.monotonic() - started:.2f} s)")
    stream.close()
    status = json.loads(client.status())  # schema: SPEC.md section 6.8
    if status.get("version") != 1:
        raise SystemExit(f"unknown status schema version {status.get('version')}")
    print(f"server status: {len(status['clients'])} client(s), output {status['output']['kind']}")
    client.close()


if __name__ == "__main__":
    main()
