# ptyrun.py - runs a command on a new pseudo-terminal, as a user's shell
# would, and types Ctrl-C once the command has printed "ready". Prints the
# command's exit status and what the terminal showed; gives up after 20 s.
#
#   python3 ptyrun.py COMMAND [ARG]...
import os
import pty
import select
import sys
import time

pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
seen = b""
typed = False
deadline = time.time() + 20
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if ready:
        try:
            data = os.read(fd, 1024)
        except OSError:
            break
        if not data:
            break
        seen += data
    if not typed and b"ready" in seen:
        os.write(fd, b"\x03")
        typed = True
if time.time() >= deadline:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
print("status", os.waitstatus_to_exitcode(status), "typed" if typed else "not-typed")
print(seen.decode(errors="replace"))
