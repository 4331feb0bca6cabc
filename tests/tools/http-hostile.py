#!/usr/bin/env python3
# http-hostile.py: raw-socket clients for tests/integration/http_hygiene.sh.
#   raw PORT TEXT           send TEXT (with \r\n escapes), print the status line
#   slow PORT N SECONDS [K] N connections trickling a header a line every
#                           0.5 s, each reconnected when the server closes it;
#                           prints "opened N" once all are open, then at the
#                           end "alive A reconnects R"; with K, from the K
#                           addresses 127.0.1.1 ... (round robin), not
#                           127.0.0.1
#   burst PORT N SECONDS    N honest clients at once, each sending a whole
#                           GET /api/v1/events at once; prints "streams K of
#                           N" once K got their 200 (within SECONDS)
#   early PORT MODE         a 10 MiB POST without a token (MODE chunked or
#                           length): how soon the status line comes, before
#                           the body is sent; prints "STATUS SECONDS SENT"
#   bodies DIR              write the hostile 1 MiB bodies into DIR
import os
import socket
import sys
import time

MIB = 1024 * 1024


def connect(port, src="127.0.0.1"):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def status_line(s, timeout):
    s.settimeout(timeout)
    out = b""
    try:
        while b"\r\n" not in out:
            d = s.recv(4096)
            if not d:
                break
            out += d
    except OSError:
        pass
    return out.split(b"\r\n")[0].decode("latin-1")


def cmd_raw(port, text):
    s = connect(port)
    s.sendall(text.encode("latin-1").decode("unicode_escape").encode("latin-1"))
    print(status_line(s, 5) or "(closed)")


def cmd_slow(port, n, seconds, spread=0):
    socks = {}
    reconnects = 0
    nth = [0]

    def one():
        src = "127.0.0.1"
        if spread:
            k = nth[0] % spread
            src = "127.0.%d.%d" % (1 + k // 250, 1 + k % 250)
            nth[0] += 1
        s = connect(port, src)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        s.setblocking(False)
        socks[s.fileno()] = s

    for _ in range(n):
        one()
    print("opened %d" % len(socks), flush=True)
    t0 = time.time()
    while time.time() - t0 < seconds:
        for fd, s in list(socks.items()):
            try:
                s.send(b"X-Trickle: 1\r\n")
                if s.recv(4096) == b"":
                    raise OSError("closed")
            except BlockingIOError:
                pass
            except OSError:
                s.close()
                del socks[fd]
                reconnects += 1
                try:
                    one()
                except OSError:
                    pass
        time.sleep(0.5)
    print("alive %d reconnects %d" % (len(socks), reconnects), flush=True)


def cmd_burst(port, n, seconds):
    socks = []
    for _ in range(n):
        s = connect(port)
        s.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.setblocking(False)
        socks.append([s, b""])
    ok = set()
    t0 = time.time()
    while time.time() - t0 < seconds and len(ok) < n:
        for i, e in enumerate(socks):
            if i in ok:
                continue
            try:
                d = e[0].recv(4096)
                if d:
                    e[1] += d
            except BlockingIOError:
                pass
            except OSError:
                pass
            if e[1].startswith(b"HTTP/1.1 200"):
                ok.add(i)
        time.sleep(0.1)
    print("streams %d of %d in %.1f s" % (len(ok), n, time.time() - t0), flush=True)
    for e in socks:
        e[0].close()


def cmd_early(port, mode):
    s = connect(port)
    head = "POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    if mode == "chunked":
        head += "Transfer-Encoding: chunked\r\n\r\n"
    else:
        head += "Content-Length: %d\r\n\r\n" % (10 * MIB)
    t0 = time.time()
    s.sendall(head.encode())
    # The answer must come before the body: send it slowly, 64 KiB every
    # 50 ms (10 MiB would take 8 s), and stop at the status line.
    s.setblocking(False)
    sent = 0
    chunk = b"[" * 65536
    got = b""
    while sent < 10 * MIB and time.time() - t0 < 20:
        try:
            d = s.recv(4096)
            if d:
                got += d
            if b"\r\n" in got or d == b"":
                break
        except BlockingIOError:
            pass
        except OSError:
            break
        try:
            if mode == "chunked":
                s.send(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            else:
                s.send(chunk)
            sent += len(chunk)
        except (BlockingIOError, OSError):
            pass
        time.sleep(0.05)
    if b"\r\n" not in got:
        got += status_line(s, 20).encode()
    line = got.split(b"\r\n")[0].decode("latin-1")
    code = line.split(" ")[1] if line.count(" ") >= 2 else "none"
    print("%s %.3f %d" % (code, time.time() - t0, sent))


def cmd_bodies(d):
    def w(name, data):
        with open(os.path.join(d, name), "wb") as f:
            f.write(data[:MIB])

    # 1 MiB each, every one under BF_MAX_API_BODY
    w("objects.json", b"[" + b"{}," * ((MIB - 2) // 3 - 1) + b"{}]")
    w("arrays.json", b"[" + b"[]," * ((MIB - 2) // 3 - 1) + b"[]]")
    w("deep.json", b"[" * (MIB - 1) + b"1")
    w("string.json", b'{"recipe":"' + b"x" * (MIB - 20) + b'"}')
    w("numbers.json", b"[" + b"1," * ((MIB - 2) // 2 - 1) + b"1]")
    w("keys.json", b"{" + b",".join(b'"k%d":{}' % i for i in range(60000)) + b"}")
    # just under the caps: parsed, then refused as a job
    near = b'{"recipe":"echo","a":[' + b",".join([b"{}"] * 32000) + b'],"b":["' + \
        b'","'.join([b"x" * 4] * 90000) + b'"]}'
    w("near-cap.json", near)


def cmd_idle(port, n, fresh):
    """n keep-alive clients each answered once, idle past the grace, then
    fresh new connections that send nothing (a flood's start), then each
    idle client asks again: an answer or a prompt close is fine (a client
    retries on a new connection), silence is not."""
    req = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    idle = []
    for _ in range(n):
        s = connect(port)
        s.sendall(req)
        s.settimeout(5)
        got = b""
        while b"\r\n\r\n" not in got:
            d = s.recv(4096)
            if not d:
                break
            got += d
        head, _, body = got.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                length = int(v)
        while len(body) < length:
            d = s.recv(4096)
            if not d:
                break
            body += d
        if b" 200 " not in head.split(b"\r\n")[0] + b" " or len(body) != length:
            print("first answer missing")
            return
        idle.append(s)
    time.sleep(0.6)
    new = [connect(port) for _ in range(fresh)]
    time.sleep(1.2)        # a few reaper ticks
    answered = closed = hung = 0
    for s in idle:
        try:
            s.sendall(req)
        except OSError:
            closed += 1
            continue
        s.settimeout(3)
        try:
            d = s.recv(65536)
            if d:
                answered += 1
            else:
                closed += 1
        except socket.timeout:
            hung += 1
        except OSError:
            closed += 1
    for s in idle + new:
        s.close()
    print("idle %d: answered %d closed %d hung %d" % (n, answered, closed, hung))


def main():
    c = sys.argv[1]
    if c == "raw":
        cmd_raw(int(sys.argv[2]), sys.argv[3])
    elif c == "slow":
        cmd_slow(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]),
                 int(sys.argv[5]) if len(sys.argv) > 5 else 0)
    elif c == "early":
        cmd_early(int(sys.argv[2]), sys.argv[3])
    elif c == "burst":
        cmd_burst(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    elif c == "idle":
        cmd_idle(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    elif c == "bodies":
        cmd_bodies(sys.argv[2])
    else:
        sys.exit("unknown command " + c)


if __name__ == "__main__":
    main()
