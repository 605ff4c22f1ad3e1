#!/usr/bin/env python3
"""Checks scenesound_protocol.py against every golden vector in protocol/vectors.

Valid vectors: split into exactly one frame, decode to the manifest's fields and request id,
encode back to the identical bytes. Invalid vectors: the receive path (splitter, decoder, end
of stream) must report the manifest's error at the manifest's stage.
Usage: test_vectors.py [VECTORS_DIR]   (default: ../../protocol/vectors from this file)
"""
import json
import os
import struct
import sys

import scenesound_protocol as proto


def manifest_fields(name, fields):
    """The manifest's representation → this codec's (PCM as bytes, no derived code_name)."""
    ours = {k: v for k, v in fields.items() if k not in ("pcm_hex", "code_name")}
    if "pcm_hex" in fields:
        ours["pcm"] = bytes.fromhex(fields["pcm_hex"])
    return ours


def f32(value):
    """Floats compare as binary32, as they travel."""
    return struct.unpack("<f", struct.pack("<f", value))[0] if isinstance(value, float) else value


def same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return f32(a) == f32(b) if isinstance(a, (int, float)) and not isinstance(a, bool) else a == b


def check_valid(directory, vector):
    data = open(os.path.join(directory, vector["file"]), "rb").read()
    splitter = proto.FrameSplitter()
    splitter.feed(data)
    frame = splitter.next_frame()
    assert frame is not None and not splitter.buffer, "not exactly one frame"
    message_type, request_id, payload = frame
    assert message_type == vector["type_code"], f"type {message_type}"
    assert request_id == vector["request_id"], f"request id {request_id}"
    name, fields = proto.decode_message(message_type, request_id, payload, vector.get("protocol_version", 1))
    expected = manifest_fields(name, vector["fields"])
    assert name == vector["type"], name
    assert same(expected, fields), f"decoded {fields}, manifest {expected}"
    if name in ("ERROR", "STREAM_ERROR"):
        assert proto.ERROR_CODES[fields["code"]] == vector["fields"]["code_name"]
    encoded = proto.encode_frame(name, request_id, proto.encode_payload(name, expected))
    assert encoded == data, f"re-encoded {encoded.hex()} != {data.hex()}"


def check_invalid(directory, vector):
    data = open(os.path.join(directory, vector["file"]), "rb").read()
    splitter = proto.FrameSplitter()
    stage = "frame"
    try:
        splitter.feed(data)
        while True:
            stage = "frame"
            frame = splitter.next_frame()
            if frame is None:
                break
            stage = "message"
            proto.decode_message(*frame, vector.get("protocol_version", 1))
        stage = "end_of_stream"
        splitter.end_of_stream()
    except proto.ProtocolError as error:
        assert (stage, error.name) == (vector["stage"], vector["error"]), \
            f"got {error.name} at {stage}, expected {vector['error']} at {vector['stage']}"
        assert error.code == vector["error_code"]
        return
    raise AssertionError("no error found")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "protocol", "vectors")
    manifest = json.load(open(os.path.join(directory, "vectors.json")))
    failures = 0
    for kind, check in (("valid", check_valid), ("invalid", check_invalid)):
        for vector in manifest[kind]:
            try:
                check(directory, vector)
            except AssertionError as error:
                failures += 1
                print(f"FAIL {vector['file']}: {error}")
    total = len(manifest["valid"]) + len(manifest["invalid"])
    print(f"{total - failures}/{total} vectors pass "
          f"({len(manifest['valid'])} valid round-trips, {len(manifest['invalid'])} invalid)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
