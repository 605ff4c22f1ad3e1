"""A blocking, single-threaded SceneSound client over scenesound_protocol.py (SPEC.md only).

Replies are matched by request id; events that arrive while waiting (CREDIT_GRANTED,
STREAM_ENDED, STREAM_ERROR, PLAYBACK_ENDED, ERROR with id 0) are applied as they come.
"""
import os
import socket

import scenesound_protocol as proto


class ServerError(Exception):
    """The server answered with ERROR (or failed a stream): `code`, `name`, `message`."""

    def __init__(self, code, message):
        self.code = code
        self.name = proto.ERROR_CODES.get(code, f"error {code}")
        self.message = message
        super().__init__(f"{self.name}: {message}")


def default_socket_path():
    """SPEC.md section 1: $SCENESOUND_SOCKET, else $XDG_RUNTIME_DIR/scenesound/socket."""
    if os.environ.get("SCENESOUND_SOCKET"):
        return os.environ["SCENESOUND_SOCKET"]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime:
        raise RuntimeError("set SCENESOUND_SOCKET or XDG_RUNTIME_DIR")
    return os.path.join(runtime, "scenesound", "socket")


class Client:
    def __init__(self, path=None, name="python-example", timeout_seconds=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_seconds)
        self.sock.connect(path or default_socket_path())
        self.splitter = proto.FrameSplitter()
        self.next_id = 1
        self.replies = {}    # request id → (name, fields), replies not yet collected
        self.credit = {}     # stream id → bytes the client may still send
        self.failed = {}     # stream id → ServerError (STREAM_ERROR / STREAM_ENDED by the server)
        self.ended_plays = {}
        self.welcome = self.request("HELLO", min_version=1, max_version=1, client_pid=os.getpid(),
                                    client_name=name)
        self.splitter.max_frame_bytes = self.welcome["max_frame_bytes"]

    def close(self):
        self.sock.close()

    # -- Frames --

    def send(self, name, request_id=0, **fields):
        frame = proto.encode_frame(name, request_id, proto.encode_payload(name, fields),
                                   self.welcome["max_frame_bytes"] if hasattr(self, "welcome") else 4096)
        self.sock.sendall(frame)

    def read_one(self):
        """Reads and dispatches one frame from the server."""
        while True:
            frame = self.splitter.next_frame()
            if frame is not None:
                break
            data = self.sock.recv(65536)
            if not data:
                self.splitter.end_of_stream()
                raise ConnectionError("the server closed the connection")
            self.splitter.feed(data)
        name, fields = proto.decode_message(*frame)
        request_id = frame[1]
        if name == "CREDIT_GRANTED":
            if fields["stream_id"] in self.credit:  # grants after close are ignored
                self.credit[fields["stream_id"]] += fields["bytes"]
        elif name == "STREAM_ERROR":
            self.failed[fields["stream_id"]] = ServerError(fields["code"], fields["message"])
        elif name == "STREAM_ENDED" and fields["reason"] != "drained":
            self.failed[fields["stream_id"]] = ServerError(0, f"stream ended: {fields['reason']}")
        elif name == "PLAYBACK_ENDED":
            self.ended_plays[fields["play_id"]] = fields["reason"]
        elif name == "ERROR" and request_id == 0:
            raise ServerError(fields["code"], fields["message"])
        elif request_id != 0:
            self.replies[request_id] = (name, fields)

    def request(self, name, **fields):
        """Sends a request, returns its reply's fields; ERROR raises ServerError."""
        request_id = self.next_id
        self.next_id += 1
        self.send(name, request_id, **fields)
        while request_id not in self.replies:
            self.read_one()
        reply_name, reply = self.replies.pop(request_id)
        if reply_name == "ERROR":
            raise ServerError(reply["code"], reply["message"])
        return reply

    # -- Operations --

    def status(self):
        return self.request("STATUS_REQUEST")["json"]

    def open_stream(self, sample_format="s16le", channels=2, rate_hz=48000, kind="playback",
                    spatial_mode="anchored", volume_db=0.0, scene_id="", loop=False):
        opened = self.request("STREAM_OPEN", kind=kind, sample_format=sample_format, channels=channels,
                              rate_hz=rate_hz, spatial_mode=spatial_mode, loop=loop, volume_db=volume_db,
                              scene_id=scene_id)
        stream_id = opened["stream_id"]
        self.credit[stream_id] = opened["credit_bytes"]
        return Stream(self, stream_id, proto.BYTES_PER_SAMPLE[sample_format] * channels)


class Stream:
    def __init__(self, client, stream_id, bytes_per_frame):
        self.client = client
        self.id = stream_id
        self.bytes_per_frame = bytes_per_frame
        room = client.welcome["max_frame_bytes"] - proto.HEADER_BYTES - 4
        self.max_chunk = room - room % bytes_per_frame  # SPEC.md 6.3: max_frame_bytes − 16, whole frames

    def write(self, pcm):
        """Sends whole frames, never beyond the credit (section 8): waits for grants."""
        assert len(pcm) % self.bytes_per_frame == 0, "whole audio frames only"
        offset = 0
        while offset < len(pcm):
            if self.id in self.client.failed:
                raise self.client.failed[self.id]
            credit = self.client.credit[self.id]
            if credit == 0:
                self.client.read_one()
                continue
            size = min(credit, self.max_chunk, len(pcm) - offset)
            size -= size % self.bytes_per_frame
            self.client.send("STREAM_DATA", stream_id=self.id, pcm=pcm[offset:offset + size])
            self.client.credit[self.id] -= size
            offset += size

    def drain(self):
        """Returns once everything written has been played out."""
        self.client.request("STREAM_DRAIN", stream_id=self.id)

    def close(self):
        self.client.credit.pop(self.id, None)
        self.client.request("STREAM_CLOSE", stream_id=self.id)
