#!/usr/bin/env python3
"""The kubelet's part in scripts/k8s-e2e.sh, for herd's pods only: for every pod the real
scheduler placed on a kwok node (a network namespace of the same name), run its container's
command in that namespace, as the real kubelet would run it in the pod. What a pod would get
from the cluster is given the same way:

- JOB_COMPLETION_INDEX from the pod's *label* (Kubernetes 1.28+ injects it from the label,
  not the annotation);
- the image's /herd is this build's binary (HERD_BIN);
- agent 0's name (`<job>-0.<job>`, the headless Service's DNS) is the address of the node its
  pod runs on: this stand-in is the cluster's DNS too.

When the process ends, its real exit code goes to the pod's status (phase Succeeded or Failed,
the container terminated with that code), which is what the Job controller and its pod
failure policy read. A pod of a Job named `*-bad` at index 1 exits 3 instead of running
herd: the failure the check needs.
"""
import json
import os
import subprocess
import sys
import time

HERD = os.environ["HERD_BIN"]
RUN_LABEL = "herd.dev/run"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"


def kubectl(*args, stdin=None):
    return subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, check=False)


def node_ip(node):
    # herd-e2e-cN is 198.18.3.1N (scripts/k8s-e2e.sh).
    return "198.18.3.1" + node.rsplit("c", 1)[1]


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def finish(pod, code, started):
    phase = "Succeeded" if code == 0 else "Failed"
    status = {
        "status": {
            "phase": phase,
            "containerStatuses": [{
                "name": "agent",
                "image": "herd:e2e",
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": {
                    "exitCode": code,
                    "reason": "Completed" if code == 0 else "Error",
                    "startedAt": started,
                    "finishedAt": now(),
                }},
            }],
        }
    }
    r = kubectl("patch", "pod", pod, "--subresource=status", "--type=merge", "-p", json.dumps(status))
    print(f"{pod}: exited {code}, status {phase}: {r.stdout.strip()} {r.stderr.strip()}", flush=True)


def main():
    running = {}   # pod name -> (process, started)
    done = set()
    while True:
        r = kubectl("get", "pods", "-l", RUN_LABEL, "-o", "json")
        pods = json.loads(r.stdout or '{"items": []}')["items"] if r.returncode == 0 else []
        by_index = {}
        for p in pods:
            labels = p["metadata"].get("labels", {})
            if p["spec"].get("nodeName") and INDEX_LABEL in labels:
                by_index[(labels[RUN_LABEL], labels[INDEX_LABEL])] = p["spec"]["nodeName"]
        for p in pods:
            name = p["metadata"]["name"]
            node = p["spec"].get("nodeName")
            if name in running or name in done or not node or p["metadata"].get("deletionTimestamp"):
                continue
            labels = p["metadata"]["labels"]
            run, index = labels[RUN_LABEL], labels.get(INDEX_LABEL)
            zero = by_index.get((run, "0"))
            if zero is None:
                continue  # agent 0 not placed yet: its address is not known
            c = p["spec"]["containers"][0]
            env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "JOB_COMPLETION_INDEX": index}
            for e in c.get("env", []):
                if "value" in e:
                    env[e["name"]] = e["value"]
                    continue
                # The Job controller injects JOB_COMPLETION_INDEX as a fieldRef to the pod's
                # index label or annotation: resolved as the kubelet's downward API would.
                path = e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath", "")
                for kind in ("labels", "annotations"):
                    prefix = f"metadata.{kind}['"
                    if path.startswith(prefix) and path.endswith("']"):
                        key = path[len(prefix):-2]
                        value = p["metadata"].get(kind, {}).get(key)
                        if value is not None:
                            env[e["name"]] = value
            if "HERD_COORDINATOR" in env:
                port = env["HERD_COORDINATOR"].rsplit(":", 1)[1]
                env["HERD_COORDINATOR"] = f"{node_ip(zero)}:{port}"
            argv = [HERD if a == "/herd" else a for a in c.get("command", [])] + c.get("args", [])
            if run.endswith("-bad") and index == "1":
                argv = ["sh", "-c", "exit 3"]
            print(f"placed {name} on {node}: {' '.join(argv)}", flush=True)
            # Its output where kubectl-logs.sh serves `kubectl logs POD` from.
            out = os.path.join(os.environ["HERD_E2E_LOGDIR"], f"{name}.log")
            proc = subprocess.Popen(["ip", "netns", "exec", node, *argv], env=env,
                                    stdout=open(out, "w"), stderr=subprocess.STDOUT)
            running[name] = (proc, now())
        for name, (proc, started) in list(running.items()):
            code = proc.poll()
            if code is not None:
                finish(name, code, started)
                del running[name]
                done.add(name)
        # A pod deleted while running (the Job ended, herd cleaned up): stop its process.
        live = {p["metadata"]["name"] for p in pods}
        for name, (proc, _) in list(running.items()):
            if name not in live:
                proc.kill()
                proc.wait()
                del running[name]
                done.add(name)
        time.sleep(0.3)


if __name__ == "__main__":
    sys.exit(main())
