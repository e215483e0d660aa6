/work/tgt/idle/dist/herd run --io epoll -t 1 -c 1000 --think 10s -d 30s --json /work/wt/idle/bench/results/2026-12-03-124148-idle-rss/raw/c1000.json http://127.0.0.1:18082/f1.html 
