/work/tgt/idle/dist/herd run --io epoll -t 2 -c 10000 --think 10s -d 30s --json /work/wt/idle/bench/results/2026-12-03-124256-idle-rss-t2/raw/c10000.json http://127.0.0.1:18080/f1.html 
