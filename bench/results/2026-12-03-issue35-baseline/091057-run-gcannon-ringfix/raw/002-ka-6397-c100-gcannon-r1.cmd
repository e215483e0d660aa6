# in cgroup v1 /sys/fs/cgroup/cpu/herd-bench-15636 with CPU quota 25000/100000 us
taskset -c 1 env HOME=/tmp/herd-bench.bomo49 /tmp/gcannon-43b30bc-ringfix http://127.0.0.1:18081/f6397.html -c 100 -t 1 -d 4 -p 1 
