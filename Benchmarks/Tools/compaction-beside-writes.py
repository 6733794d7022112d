#!/usr/bin/env python3
# A write beside another process's compaction (Docs/Benchmarks.md, "Issue 28, third stop"):
# `folio-torture acked-writer` commits one key at a time (full durability) into STORE while
# `folio-torture compact` compacts it, started one second later; each acknowledgement is
# timestamped as it arrives, and the longest gap between acknowledgements that overlaps the
# compaction is compared with the compaction's duration and the median gap before it.
#
#   swift build -c release --product folio-torture
#   .build/release/folio-torture big-transaction /tmp/cl/s 1500000 67108864
#   python3 Benchmarks/Tools/compaction-beside-writes.py .build/release/folio-torture /tmp/cl/s
import subprocess, time, sys, threading
tool = sys.argv[1]; store = sys.argv[2]
def run_lines(args, out):
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True, bufsize=1)
    def reader():
        for line in p.stdout:
            out.append((time.monotonic(), line.strip()))
    t = threading.Thread(target=reader); t.start()
    return p, t
acks = []; comp = []
t0 = time.monotonic()
w, wt = run_lines([tool, 'acked-writer', store, '0', '100000', '--busy-timeout-ms', '120000'], acks)
time.sleep(1.0)
c_start = time.monotonic()
c, ct = run_lines([tool, 'compact', store, '--busy-timeout-ms', '120000'], comp)
c.wait(); ct.join()
c_end = time.monotonic()
time.sleep(0.5)
w.kill(); w.wait(); wt.join()
times = [t for t, l in acks if l.startswith('ack ')]
during = [t for t in times if c_start <= t <= c_end]
gaps = [b - a for a, b in zip(times, times[1:]) if b >= c_start and a <= c_end]
before = [b - a for a, b in zip(times, times[1:]) if b < c_start]
print(f"compaction {c_end - c_start:.3f} s ({comp[-1][1] if comp else '?'}); commits during it {len(during)}; "
      f"longest gap between acks overlapping it {max(gaps)*1000:.1f} ms; median gap before it {sorted(before)[len(before)//2]*1000:.2f} ms")
