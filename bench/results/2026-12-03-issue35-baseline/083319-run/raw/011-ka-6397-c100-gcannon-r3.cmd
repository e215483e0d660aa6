# in cgroup v1 /sys/fs/cgroup/cpu/herd-bench-12759 with CPU quota 25000/100000 us
taskset -c 1 env HOME=/tmp/herd-bench.ummlhZ /work/wt/bench0/target/bench-peers/gcannon-43b30bc/bin/gcannon http://127.0.0.1:18080/f6397.html -c 100 -t 1 -d 4 -p 1 
