import yaml
H = "# A kubeadm-shaped cluster for `harness import` (harness/cli/tests/import.rs): a control-plane node,\n# 2 zones of workers, a node tainted for other work, a zone with only the control plane.\n"
def node(name, zone, cpu, cp=False, taints=None):
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": zone}
    if cp: labels["node-role.kubernetes.io/control-plane"] = ""
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
         "spec": {"taints": taints} if taints else {},
         "status": {"allocatable": {"cpu": cpu, "memory": "7Gi", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"}]}}
    return n
nodes = [node("cp-1", "dc1-c", "2", cp=True, taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}])]
for z in ["dc1-a", "dc1-b"]:
    for i in range(1, 4):
        nodes.append(node(f"worker-{z[-1]}{i}", z, "4"))
nodes.append(node("edge-b4", "dc1-b", "2", taints=[{"key": "dedicated", "value": "edge", "effect": "NoSchedule"}]))
labels = {"app": "search"}
dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "search", "namespace": "default"},
  "spec": {"replicas": 4, "selector": {"matchLabels": labels}, "strategy": {"type": "Recreate"},
    "template": {"metadata": {"labels": labels}, "spec": {
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["dc1-a", "dc1-b"]}]}]}}},
      "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": labels}}],
      "containers": [
        {"name": "search", "image": "search:3", "ports": [{"containerPort": 9200}],
         "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 15"]}}}},
        {"name": "limiter", "image": "harness-sidecar:dev", "args": ["--max-concurrency", "24", "--queue-size=64", "--queue-timeout", "500ms"], "ports": [{"containerPort": 8080}]}]}}}}
svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "search", "namespace": "default", "annotations": {"service.kubernetes.io/topology-mode": "Auto"}},
       "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": 9200}]}}
hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "search", "namespace": "default"},
       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "search"}, "minReplicas": 2, "maxReplicas": 8,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}}
eps = []
for i, (n, z) in enumerate([("worker-a1", "dc1-a"), ("worker-a2", "dc1-a"), ("worker-b1", "dc1-b"), ("worker-b2", "dc1-b")]):
    eps.append({"addresses": [f"10.244.{i+1}.5"], "conditions": {"ready": True}, "nodeName": n, "zone": z})
slices = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
          "metadata": {"name": "search-abcde", "namespace": "default", "labels": {"kubernetes.io/service-name": "search"}},
          "endpoints": eps, "ports": [{"port": 9200}]}
def dump(path, docs, header):
    with open(path, "w") as f:
        f.write(header)
        yaml.safe_dump_all(docs, f, sort_keys=False, explicit_start=True)
dump("kubeadm-nodes.yaml", [{"apiVersion": "v1", "kind": "NodeList", "items": nodes}], H + "# kubectl get nodes -o yaml\n")
dump("kubeadm-service.yaml", [svc], H)
dump("kubeadm-objects.yaml", [dep, hpa, slices], H + "# several documents: the Deployment, its HPA and the Service's EndpointSlice\n")
dump("kubeadm-endpointslices.yaml", [slices], H)
