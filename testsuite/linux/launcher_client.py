#!/usr/bin/env python3
"""launcher_client.py SOCKET PROOF -- CMD...: a client of `cagerun launcher`
written from docs/launcher.md, not from cage-launch, that says what the
launcher answered (testsuite/linux/launcher.sh).

PROOF is what it sends as its look at the launcher, and how:
  fair       the launcher's memfd, opened through /proc/LAUNCHER/fd/M, as
             cage-launch does (the control: the run starts)
  own        its own memfd instead, which is all a process in a Landlock
             domain can send (the launcher must refuse it)
  bad-magic, short, fewfds, badcount, unended
             a fair proof in a malformed request: a wrong magic number, a
             header cut short, four descriptors instead of five, more
             strings counted than sent, the last string without its NUL
Prints "refused: REASON", or "accepted" and then "status N"."""
import os
import resource
import socket
import struct
import sys

MSG = struct.Struct("=BB2xi200s")  # struct lch_msg
REQ = struct.Struct("=B3xIIIIIII" + "QQ" * 16)  # struct lch_req
MAGIC, VERSION = 0x31474C43, 1


def recv(s):
    try:
        data, fds, _, _ = socket.recv_fds(s, MSG.size, 1)
    except ConnectionResetError:  # refused and closed before we read why
        return "R", 0, -1, "the connection was reset", []
    t, v, fd, text = MSG.unpack(data)
    return chr(t), v, fd, text.split(b"\0")[0].decode(), fds


def main():
    path, proof = sys.argv[1], sys.argv[2]
    cmd = sys.argv[4:]
    mine = os.memfd_create("fake-client")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    try:
        s.send(MSG.pack(ord("G"), 0, mine, b""))
    except OSError:
        pass  # refused at once: its REFUSE is still there to read
    t, _, their_fd, text, fds = recv(s)
    if t != "H":
        print("refused:", text)
        return 0
    if proof != "own":
        pid = struct.unpack("=iII", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        look = os.open("/proc/%d/fd/%d" % (pid, their_fd), os.O_RDONLY)
    else:
        look = os.open("/proc/self/fd/%d" % mine, os.O_RDONLY)
    args = [b"cagerun"] + [a.encode() for a in cmd]
    env = [("%s=%s" % kv).encode() for kv in os.environ.items()]
    strings = b"".join(x + b"\0" for x in args + env)
    limits = []
    for r in range(16):
        try:
            cur, mx = resource.getrlimit(r)
        except (ValueError, OSError):
            cur, mx = 0, 0
        limits += [cur & 0xFFFFFFFFFFFFFFFF, mx & 0xFFFFFFFFFFFFFFFF]
    um = os.umask(0o22)
    os.umask(um)
    argc = len(args) + (1 if proof == "badcount" else 0)
    if proof == "unended":
        strings = strings[:-1]
    head = REQ.pack(ord("Q"), MAGIC + (proof == "bad-magic"), VERSION, argc, len(env), um,
                    len(strings), 0, *limits)
    if proof == "short":
        head = head[:20]
        strings = b""
    cwd = os.open(".", os.O_PATH | os.O_DIRECTORY)
    fds = [0, 1, 2, cwd, look] if proof != "fewfds" else [0, 1, 2, cwd]
    socket.send_fds(s, [head + strings], fds)
    t, _, _, text, _ = recv(s)
    if t != "A":
        print("refused:", text)
        return 0
    print("accepted", flush=True)
    t, v, _, _, _ = recv(s)
    print("status", v if t == "S" else "none")
    return 0


sys.exit(main())
