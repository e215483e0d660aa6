# in cgroup v1 /sys/fs/cgroup/cpu/herd-bench-15636 with CPU quota 25000/100000 us
taskset -c 1 /tmp/herd-base-ba4e887 run -c 100 -t 1 -n 150000 http://127.0.0.1:18081/f6397.html 
