"""SceneSound wire protocol v1, written from protocol/SPEC.md alone, with the standard library.

Messages are dicts of SPEC.md field names; enums are their SPEC.md names ("s16le",
"head_locked"), PCM is bytes. `encode_frame` / `FrameSplitter` handle the 12-byte header
(section 3), `encode_payload` / `decode_payload` the payloads (section 6), and decoding applies
the receiver's checks of sections 2, 5 and 9, raising ProtocolError with the error name the
spec assigns.
"""
import math
import struct

HEADER = struct.Struct("<IHHI")  # payload_length, message_type, flags, request_id
HEADER_BYTES = HEADER.size
DEFAULT_MAX_FRAME_BYTES = 262144

ERROR_CODES = {
    1: "malformed_frame", 2: "frame_too_large", 3: "unsupported_version", 4: "unexpected_message",
    5: "unknown_message_type", 6: "malformed_payload", 7: "invalid_argument", 8: "bad_format",
    9: "unknown_stream", 10: "unknown_scene", 11: "unknown_sound", 12: "limit_exceeded",
    13: "credit_exceeded", 14: "not_permitted", 15: "internal",
}
ERROR_NAMES = {name: code for code, name in ERROR_CODES.items()}

# Enumerations (section 5). The value an unknown number is reported as is in ENUM_ERRORS.
ENUMS = {
    "sample_format": {1: "s16le", 2: "s32le", 3: "f32le"},
    "kind": {1: "playback", 2: "system", 3: "alert"},
    "spatial_mode": {1: "anchored", 2: "head_locked", 3: "off"},
    "anchor": {0: "none", 1: "window", 2: "position"},
    "stream_end_reason": {1: "drained", 2: "server_shutdown", 3: "removed_by_server"},
    "playback_end_reason": {1: "completed", 2: "coalesced", 3: "interrupted"},
    "spatial": {0: "off", 1: "fixed", 2: "head-tracked"},
    "render": {0: "auto", 1: "headphones", 2: "speakers"},
    "tracking_mode": {1: "full", 2: "yaw_only", 3: "off"},
    "tracker": {1: "any", 2: "opentrack", 3: "osc"},
}
ENUM_ERRORS = {"sample_format": "bad_format"}  # every other enum: invalid_argument
BYTES_PER_SAMPLE = {"s16le": 2, "s32le": 4, "f32le": 4}
# STREAM_OPEN's channel_map (version 2): speakers in the WAVE / SMPTE order, by their wire number.
CHANNEL_POSITIONS = ["FL", "FR", "FC", "LFE", "BL", "BR", "SL", "SR"]


class ProtocolError(Exception):
    """A defect SPEC.md section 9 names; `name` is its error name ("malformed_payload")."""

    def __init__(self, name, detail):
        super().__init__(f"{name}: {detail}")
        self.name = name
        self.code = ERROR_NAMES[name]


# Field types: "u8" "u16" "u32" "u64" "f32" "bool" "str8" "str16" "rest" (bytes to the end),
# "json" (UTF-8 to the end), ("enum", name) stored as a u8, "entries" (SCENE_LIST_REPLY).
ENTRY = [("scene_id", "str8"), ("anchor", ("enum", "anchor")), ("window_id", "u32"),
         ("azimuth_degrees", "f32"), ("elevation_degrees", "f32"), ("distance_metres", "f32")]
STREAM_REF = [("stream_id", "u32")]

# code: (name, direction, kind, fields). kind: request, reply, one_way, event (section 4).
MESSAGES = {
    0x0001: ("HELLO", "C", "request", [("min_version", "u16"), ("max_version", "u16"),
                                       ("client_pid", "u32"), ("client_name", "str8")]),
    0x0002: ("WELCOME", "S", "reply", [("version", "u16"), ("sample_rate_hz", "u32"), ("block_frames", "u32"),
                                       ("max_frame_bytes", "u32"), ("max_streams", "u32"),
                                       ("max_sample_bytes", "u32"), ("server_name", "str8")]),
    0x0003: ("OK", "S", "reply", []),
    0x0004: ("ERROR", "S", "error", [("code", "u16"), ("message", "str16")]),
    0x0101: ("SCENE_BIND_WINDOW", "C", "request", [("scene_id", "str8"), ("window_id", "u32")]),
    0x0102: ("SCENE_PLACE", "C", "request", [("scene_id", "str8"), ("azimuth_degrees", "f32"),
                                             ("elevation_degrees", "f32"), ("distance_metres", "f32")]),
    0x0103: ("SCENE_UNBIND", "C", "request", [("scene_id", "str8")]),
    0x0104: ("SCENE_LIST", "C", "request", []),
    0x0105: ("SCENE_LIST_REPLY", "S", "reply", [("count", "u16"), ("entries", "entries")]),
    0x0201: ("STREAM_OPEN", "C", "request", [("kind", ("enum", "kind")), ("sample_format", ("enum", "sample_format")),
                                             ("channels", "u8"), ("rate_hz", "u32"),
                                             ("spatial_mode", ("enum", "spatial_mode")), ("loop", "bool"),
                                             ("volume_db", "f32"), ("scene_id", "str8")]),
    0x0202: ("STREAM_OPENED", "S", "reply", [("stream_id", "u32"), ("credit_bytes", "u32")]),
    0x0203: ("STREAM_DATA", "C", "one_way", [("stream_id", "u32"), ("pcm", "rest")]),
    0x0204: ("STREAM_DRAIN", "C", "request", STREAM_REF),
    0x0205: ("STREAM_CLOSE", "C", "request", STREAM_REF),
    0x0206: ("STREAM_SET_VOLUME", "C", "request", [("stream_id", "u32"), ("volume_db", "f32")]),
    0x0207: ("STREAM_SET_SCENE", "C", "request", [("stream_id", "u32"), ("scene_id", "str8")]),
    0x0301: ("SAMPLE_UPLOAD", "C", "request", [("name", "str8"), ("sample_format", ("enum", "sample_format")),
                                               ("channels", "u8"), ("rate_hz", "u32"), ("total_bytes", "u32"),
                                               ("offset_bytes", "u32"), ("pcm", "rest")]),
    0x0302: ("SAMPLE_PLAY", "C", "request", [("name", "str8"), ("kind", ("enum", "kind")),
                                             ("spatial_mode", ("enum", "spatial_mode")), ("volume_db", "f32"),
                                             ("scene_id", "str8"), ("demand_attention", "bool")]),
    0x0303: ("SAMPLE_PLAYING", "S", "reply", [("play_id", "u32")]),
    0x0401: ("HEAD_POSE", "C", "one_way", [("timestamp_ns", "u64"), ("w", "f32"), ("x", "f32"), ("y", "f32"),
                                           ("z", "f32"), ("has_position", "bool"), ("x_metres", "f32"),
                                           ("y_metres", "f32"), ("z_metres", "f32")]),
    0x0402: ("HEAD_RECENTER", "C", "request", []),
    0x0403: ("HEAD_TRACKING_SET", "C", "request", [("mode", ("enum", "tracking_mode")), ("recenter_after_seconds", "f32")]),
    0x0404: ("HEAD_TRACKER_USE", "C", "request", [("tracker", ("enum", "tracker")), ("poses_per_second", "u32")]),
    0x0501: ("STATUS_REQUEST", "C", "request", []),
    0x0502: ("STATUS_REPLY", "S", "reply", [("json", "json")]),
    0x0601: ("HEADPHONE_EQ_USE", "C", "request", [("path", "str16")]),
    0x0602: ("HRTF_USE", "C", "request", [("path", "str16")]),
    0x0603: ("SPATIAL_USE", "C", "request", [("spatial", ("enum", "spatial"))]),
    0x0604: ("OUTPUT_DEVICE_WATCH", "C", "request", []),
    0x0605: ("RENDER_USE", "C", "request", [("render", ("enum", "render"))]),
    0x0801: ("CREDIT_GRANTED", "S", "event", [("stream_id", "u32"), ("bytes", "u32")]),
    0x0802: ("STREAM_ENDED", "S", "event", [("stream_id", "u32"), ("reason", ("enum", "stream_end_reason"))]),
    0x0803: ("STREAM_ERROR", "S", "event", [("stream_id", "u32"), ("code", "u16"), ("message", "str16")]),
    0x0804: ("PLAYBACK_ENDED", "S", "event", [("play_id", "u32"), ("reason", ("enum", "playback_end_reason"))]),
    0x0805: ("OUTPUT_DEVICE_CHANGED", "S", "event", [("json", "json")]),
}
CODES = {spec[0]: code for code, spec in MESSAGES.items()}

SCALARS = {"u8": struct.Struct("<B"), "u16": struct.Struct("<H"), "u32": struct.Struct("<I"),
           "u64": struct.Struct("<Q"), "f32": struct.Struct("<f")}


# ---- Frames (section 3) ------------------------------------------------------------------

def encode_frame(message_type, request_id, payload, max_frame_bytes=DEFAULT_MAX_FRAME_BYTES):
    """One frame. `message_type` is a name ("HELLO") or a code."""
    code = CODES[message_type] if isinstance(message_type, str) else message_type
    if HEADER_BYTES + len(payload) > max_frame_bytes:
        raise ProtocolError("frame_too_large", f"{HEADER_BYTES + len(payload)} bytes")
    return HEADER.pack(len(payload), code, 0, request_id) + bytes(payload)


class FrameSplitter:
    """Splits a byte stream into (message_type, request_id, payload) without reading payloads."""

    def __init__(self, max_frame_bytes=DEFAULT_MAX_FRAME_BYTES):
        self.max_frame_bytes = max_frame_bytes
        self.buffer = bytearray()

    def feed(self, data):
        self.buffer += data

    def next_frame(self):
        """The next whole frame, or None when more bytes are needed."""
        if len(self.buffer) >= 4:
            (length,) = struct.unpack_from("<I", self.buffer)
            # Checked on the first 4 bytes, before buffering any of the payload.
            if HEADER_BYTES + length > self.max_frame_bytes:
                raise ProtocolError("frame_too_large", f"payload_length {length}")
        if len(self.buffer) < HEADER_BYTES:
            return None
        length, message_type, flags, request_id = HEADER.unpack_from(self.buffer)
        if flags != 0:
            raise ProtocolError("malformed_frame", f"flags 0x{flags:04x}")
        if len(self.buffer) < HEADER_BYTES + length:
            return None
        payload = bytes(self.buffer[HEADER_BYTES:HEADER_BYTES + length])
        del self.buffer[:HEADER_BYTES + length]
        return message_type, request_id, payload

    def end_of_stream(self):
        """The connection ended: leftover bytes are a frame cut off."""
        if self.buffer:
            raise ProtocolError("malformed_frame", f"connection ended inside a frame ({len(self.buffer)} bytes)")


# ---- Payloads (section 6) ----------------------------------------------------------------

def encode_payload(message_type, fields):
    name, _, _, layout = MESSAGES[CODES[message_type]]
    out = bytearray()
    for field, kind in layout:
        value = fields.get(field)
        if name == "HEAD_POSE" and field.endswith("_metres") and not fields["has_position"]:
            value = 0.0  # all-zero bytes without a position
        _write(out, kind, value)
    if name == "STREAM_OPEN" and fields.get("channel_map") is not None:  # version 2
        out.append(len(fields["channel_map"]))
        out += bytes(CHANNEL_POSITIONS.index(position) for position in fields["channel_map"])
    return bytes(out)


def _write(out, kind, value):
    if isinstance(kind, tuple):
        names = ENUMS[kind[1]]
        out += SCALARS["u8"].pack(next(number for number, text in names.items() if text == value))
    elif kind in SCALARS:
        out += SCALARS[kind].pack(value)
    elif kind == "bool":
        out.append(1 if value else 0)
    elif kind in ("str8", "str16"):
        data = value.encode("utf-8")
        out += (SCALARS["u8"] if kind == "str8" else SCALARS["u16"]).pack(len(data)) + data
    elif kind == "rest":
        out += value
    elif kind == "json":
        out += value.encode("utf-8")
    elif kind == "entries":
        for entry in value:
            for field, entry_kind in ENTRY:
                _write(out, entry_kind, entry[field])


def decode_message(message_type, request_id, payload, version=1):
    """(name, fields) of one frame, after every receiver check; raises ProtocolError.
    `version`: the protocol version agreed on the connection (STREAM_OPEN grew in version 2)."""
    if message_type not in MESSAGES:
        raise ProtocolError("unknown_message_type", f"type 0x{message_type:04x}")
    name, _, kind, layout = MESSAGES[message_type]
    needs_id = kind in ("request", "reply")
    if kind != "error" and (request_id != 0) != needs_id:
        raise ProtocolError("malformed_frame", f"{name} with request id {request_id}")
    reader = _Reader(payload)
    fields = {}
    for field, field_kind in layout:
        if field_kind == "entries":
            fields[field] = [{f: reader.read(k) for f, k in ENTRY} for _ in range(fields["count"])]
        else:
            fields[field] = reader.read(field_kind)
    if name == "STREAM_OPEN" and version >= 2:
        numbers = [reader.read("u8") for _ in range(reader.read("u8"))]
        if any(number >= len(CHANNEL_POSITIONS) for number in numbers):
            raise ProtocolError("bad_format", f"channel_map {numbers}")
        fields["channel_map"] = [CHANNEL_POSITIONS[number] for number in numbers]
    if reader.offset != len(payload):
        raise ProtocolError("malformed_payload", f"{len(payload) - reader.offset} trailing bytes")
    _validate(name, fields)
    return name, fields


class _Reader:
    def __init__(self, payload):
        self.payload = payload
        self.offset = 0

    def take(self, count):
        if self.offset + count > len(self.payload):
            raise ProtocolError("malformed_payload", "truncated payload")
        data = self.payload[self.offset:self.offset + count]
        self.offset += count
        return data

    def read(self, kind):
        if isinstance(kind, tuple):
            number = self.read("u8")
            if number not in ENUMS[kind[1]]:
                raise ProtocolError(ENUM_ERRORS.get(kind[1], "invalid_argument"), f"{kind[1]} {number}")
            return ENUMS[kind[1]][number]
        if kind in SCALARS:
            return SCALARS[kind].unpack(self.take(SCALARS[kind].size))[0]
        if kind == "bool":
            byte = self.read("u8")
            if byte > 1:
                raise ProtocolError("malformed_payload", f"bool byte {byte}")
            return byte == 1
        if kind in ("str8", "str16"):
            return _text(self.take(self.read("u8" if kind == "str8" else "u16")))
        rest = self.take(len(self.payload) - self.offset)
        return _text(rest) if kind == "json" else rest


def _text(data):
    try:
        text = data.decode("utf-8")  # strict: no overlong forms, no surrogates
    except UnicodeDecodeError:
        raise ProtocolError("malformed_payload", "invalid UTF-8") from None
    if "\0" in text:
        raise ProtocolError("malformed_payload", "NUL in a string")
    return text


# ---- Range rules (section 5) and scene ids (section 7) ------------------------------------

RANGES = {"volume_db": (-200.0, 24.0), "azimuth_degrees": (-360.0, 360.0),
          "elevation_degrees": (-90.0, 90.0), "distance_metres": (0.01, 1000.0)}
NON_ZERO = ("stream_id", "play_id", "window_id", "credit_bytes", "bytes")


def _validate(name, fields):
    for field, value in fields.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ProtocolError("invalid_argument", f"{field} is not finite")
        if field in RANGES and not RANGES[field][0] <= value <= RANGES[field][1]:
            raise ProtocolError("invalid_argument", f"{field} {value} out of range")
        if field in NON_ZERO and value == 0 and not (name == "SCENE_LIST_REPLY"):
            raise ProtocolError("invalid_argument", f"{field} is 0")
    if "rate_hz" in fields and not 8000 <= fields["rate_hz"] <= 192000:
        raise ProtocolError("bad_format", f"rate {fields['rate_hz']} Hz")
    surround = "channel_map" in fields  # STREAM_OPEN from version 2 on: up to 7.1
    if "channels" in fields and not 1 <= fields["channels"] <= (8 if surround else 2):
        raise ProtocolError("bad_format", f"{fields['channels']} channels")
    if surround and (fields["channel_map"] and len(fields["channel_map"]) != fields["channels"]
                     or len(set(fields["channel_map"])) != len(fields["channel_map"])):
        raise ProtocolError("bad_format", f"channel_map {fields['channel_map']}")
    if "scene_id" in fields:
        allow_empty = name in ("STREAM_OPEN", "STREAM_SET_SCENE", "SAMPLE_PLAY")
        check_scene_id(fields["scene_id"], allow_empty)
    for entry in fields.get("entries", []):
        check_scene_id(entry["scene_id"], allow_empty=False)
        if (entry["anchor"] == "window") != (entry["window_id"] != 0):
            raise ProtocolError("invalid_argument", "window_id does not match the anchor")
    if name == "HELLO" and not 1 <= fields["min_version"] <= fields["max_version"]:
        raise ProtocolError("invalid_argument", "bad version range")
    if name == "STREAM_OPEN" and fields["loop"] and fields["kind"] != "playback":
        raise ProtocolError("invalid_argument", "only playback streams loop")
    if name == "SAMPLE_PLAY" and fields["kind"] == "playback":
        raise ProtocolError("invalid_argument", "samples play as system or alert")
    if name == "HEAD_POSE" and not fields["has_position"] and (
            fields["x_metres"], fields["y_metres"], fields["z_metres"]) != (0.0, 0.0, 0.0):
        raise ProtocolError("malformed_payload", "position bytes without has_position")
    if name in ("ERROR", "STREAM_ERROR") and fields["code"] == 0:
        raise ProtocolError("invalid_argument", "error code 0")


def check_scene_id(scene_id, allow_empty):
    if scene_id == "":
        if not allow_empty:
            raise ProtocolError("invalid_argument", "empty scene id")
        return
    if scene_id.startswith("x11:"):
        digits = scene_id[6:]
        if (scene_id[4:6] not in ("0x", "0X") or not 1 <= len(digits) <= 8
                or any(c not in "0123456789abcdefABCDEF" for c in digits) or int(digits, 16) == 0):
            raise ProtocolError("invalid_argument", f"bad x11 scene id {scene_id!r}")
