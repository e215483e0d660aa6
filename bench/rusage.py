#!/usr/bin/env python3
"""Run a command and record its resource usage with microsecond resolution.

usage: rusage.py OUTFILE [--cg DIR]... -- CMD [ARGS...]

The child joins each cgroup DIR (writes its PID to DIR/cgroup.procs) before it execs CMD, so
CMD and everything it starts run under that group's CPU quota; this process stays outside.
OUTFILE.pid gets the child's PID (so that a caller can stop it). OUTFILE gets one line: "elapsed_s user_s sys_s max_rss_kib exit_code", from wait4() on the
child: user/sys include every descendant it waited for (as /usr/bin/time's %U %S do, but with
microsecond instead of 10 ms resolution). Exit code: the command's, or 128+signal.
"""
import os
import sys
import time


def main():
    args = sys.argv[1:]
    if len(args) < 3 or "--" not in args:
        sys.exit(__doc__)
    out = args[0]
    sep = args.index("--")
    opts, cmd = args[1:sep], args[sep + 1:]
    cgs = []
    while opts:
        if opts[0] != "--cg" or len(opts) < 2:
            sys.exit(__doc__)
        cgs.append(opts[1])
        opts = opts[2:]
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            for d in cgs:
                with open(os.path.join(d, "cgroup.procs"), "w") as f:
                    f.write(str(os.getpid()))
            os.execvp(cmd[0], cmd)
        except OSError as e:
            print(f"rusage.py: {cmd[0]}: {e}", file=sys.stderr)
            os._exit(127)
    with open(out + ".pid", "w") as f:
        f.write(f"{pid}\n")
    while True:
        try:
            _, status, ru = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    elapsed = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc < 0:
        rc = 128 - rc
    with open(out, "w") as f:
        f.write(f"{elapsed:.6f} {ru.ru_utime:.6f} {ru.ru_stime:.6f} {ru.ru_maxrss} {rc}\n")
    sys.exit(rc)


if __name__ == "__main__":
    main()
