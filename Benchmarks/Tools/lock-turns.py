#!/usr/bin/env python3
"""How the store's lock was used in an `mp` run, from `perf` flock tracepoints.

Reads `perf script -F pid,tid,time,event,trace` output of syscalls:sys_{enter,exit}_flock
(lock-turns.sh records it) and prints, per run of P processes: the share of time the lock
was held, the mean turn, the turns that followed a hand-off (another process held it last)
against the others, and the gaps between a release and the next take by the same process.
The lock file is the descriptor the children opened third (fd 3, as folio-bench's `__child
mp-update` does); `--fd N` names another. Usage: lock-turns.py TRACE [--processes P] [--fd N]
"""
import re
import statistics as st
import sys


def main():
    args = sys.argv[1:]
    path = args[0]
    processes = int(args[args.index("--processes") + 1]) if "--processes" in args else 4
    fd = int(args[args.index("--fd") + 1]) if "--fd" in args else 3
    pending, calls = {}, []
    for line in open(path):
        m = re.match(r"\s*(\d+)/(\d+)\s+([\d.]+):\s+syscalls:sys_(enter|exit)_flock:\s+(.*)", line)
        if not m:
            continue
        pid, tid, t, kind, rest = m.groups()
        if kind == "enter":
            descriptor = int(re.search(r"fd: (0x[0-9a-f]+)", rest).group(1), 16)
            command = int(re.search(r"cmd: (0x[0-9a-f]+)", rest).group(1), 16)
            pending[tid] = (pid, descriptor, command, float(t))
        elif tid in pending:
            pid, descriptor, command, start = pending.pop(tid)
            if descriptor == fd:
                calls.append((start, float(t), pid, command, int(rest.strip(), 16) == 0))
    calls.sort()
    pids = sorted({c[2] for c in calls}, key=int)
    for first in range(0, len(pids), processes):
        group = set(pids[first:first + processes])
        run = [c for c in calls if c[2] in group]
        holder, taken, last_pid, last_release = None, 0.0, None, None
        after_handoff, others, same_gaps, handoff = [], [], [], False
        for start, end, pid, command, ok in run:
            if command == 6 and ok:  # LOCK_EX | LOCK_NB, taken
                handoff = last_pid is not None and pid != last_pid
                if last_release is not None and not handoff:
                    same_gaps.append(end - last_release)
                holder, taken = pid, end
            elif command == 8 and holder == pid:  # LOCK_UN
                (after_handoff if handoff else others).append(start - taken)
                holder, last_pid, last_release = None, pid, start
        turns = after_handoff + others
        span = run[-1][0] - run[0][0]
        extra = sum(after_handoff) - len(after_handoff) * st.mean(others)
        print(
            f"span {span * 1e3:.0f} ms, {len(turns)} turns, lock held {sum(turns) / span * 100:.1f} %; "
            f"turn mean {st.mean(others) * 1e6:.0f} us; after a hand-off ({len(after_handoff)}) "
            f"{st.mean(after_handoff) * 1e3:.2f} ms, {extra * 1e3:.0f} ms more in all; "
            f"same-process gap median {st.median(same_gaps) * 1e6:.0f} us, {sum(same_gaps) * 1e3:.0f} ms in all")


main()
