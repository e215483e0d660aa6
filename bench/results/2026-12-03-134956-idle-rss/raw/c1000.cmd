/work/scratch/herd-uring-b run --io uring -t 1 -c 1000 --think 10s -d 30s --json /work/main/bench/results/2026-12-03-134956-idle-rss/raw/c1000.json http://127.0.0.1:18080/f1.html 
