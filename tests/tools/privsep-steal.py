#!/usr/bin/env python3
"""privsep-steal.py CHILD_PID BLOBFILE: act as a compromised API child.

Stops the real child (SIGSTOP), takes its control socket to the monitor
(fd 3, MONITOR_CTL_FD) with pidfd_getfd(2), sends one MONITOR_SIGN frame
holding BLOBFILE's bytes, and prints the monitor's answer: "CODE SIG_BASE64"
(CODE 0: the monitor signed it). Needs root (PTRACE_MODE_ATTACH on the
child). The child stays stopped: the caller kills it, and the monitor
starts another. Used by tests/integration/attack_privsep_sign.sh.
"""
import base64
import ctypes
import os
import signal
import socket
import struct
import sys

SYS_PIDFD_OPEN, SYS_PIDFD_GETFD = 434, 438	# x86_64 and aarch64 alike
MONITOR_CTL_FD, MONITOR_SIGN, MONITOR_REPLY = 3, 5, 64


def main():
    child, path = int(sys.argv[1]), sys.argv[2]
    blob = open(path, "rb").read()
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(SYS_PIDFD_OPEN, child, 0)
    if pidfd < 0:
        sys.exit("pidfd_open: " + os.strerror(ctypes.get_errno()))
    os.kill(child, signal.SIGSTOP)
    fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, MONITOR_CTL_FD, 0)
    if fd < 0:
        sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
    s = socket.socket(fileno=fd)
    s.settimeout(20)
    s.sendall(struct.pack(">IB", 1 + len(blob), MONITOR_SIGN) + blob)

    def rd(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                print("EOF -")	# the monitor hung up: refused too
                sys.exit(0)
            b += c
        return b
    ln, ty = struct.unpack(">IB", rd(5))
    body = rd(ln - 1)
    if ty != MONITOR_REPLY or len(body) < 4:
        sys.exit("unexpected frame type %d" % ty)
    code = struct.unpack(">i", body[:4])[0]
    print(code, base64.b64encode(body[4:]).decode() or "-")


if __name__ == "__main__":
    main()
