# in cgroup v1 /sys/fs/cgroup/cpu/herd-bench-12759 with CPU quota 25000/100000 us
taskset -c 1 /work/wt/bench0/bench/floor -c 100 -n 150000 -k 1 127.0.0.1 18080 /f6397.html 
