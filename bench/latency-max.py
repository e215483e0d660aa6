#!/usr/bin/env python3
# The largest latency of each repetition of each stepped cell of a lab store (the tables show
# p50 and p99 only), from the stored HdrHistograms: python3 bench/latency-max.py STORE.
# Needs the hdrhistogram package from PyPI (pip install hdrhistogram).
import sqlite3, sys, base64, collections
from hdrh.histogram import HdrHistogram
db=sqlite3.connect(sys.argv[1])
q='''select c.key, m.label, h.data from histogram h join measurement m on m.id=h.measurement_id
     join repetition r on r.id=m.repetition_id join cell c on c.id=r.cell_id where h.name='total' and r.outcome='ok' '''
try:
    rows=db.execute(q).fetchall()
except Exception as e:
    print([r[1] for r in db.execute('pragma table_info(measurement)')]); raise
mx=collections.defaultdict(list)
for key,label,data in rows:
    h=HdrHistogram.decode(base64.b64encode(data) if isinstance(data,bytes) else data)
    mx[(key,label)].append(h.get_max_value()/1000)
for (k,l),v in sorted(mx.items()):
    if 'ramp' in k: print(f"{k.split()[0]:22} {k.split()[2]:16} {l:5} max ms: " + ", ".join(f"{x:.1f}" for x in v))
