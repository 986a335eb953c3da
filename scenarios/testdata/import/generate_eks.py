import yaml, hashlib
zones = ["us-east-1a", "us-east-1b", "us-east-1c"]
groups = {"general": ("m5.xlarge", "3920m", "4", "15076868Ki"), "large": ("m5.2xlarge", "7910m", "8", "31482436Ki"), "small": ("c5.large", "1930m", "2", "3384352Ki")}
layout = {"us-east-1a": ["large","large","large","general","general","general","small"],
          "us-east-1b": ["general","general","general","general","small","small","large"],
          "us-east-1c": ["small","small","small","general","general","small"]}
subnet = {"us-east-1a": 1, "us-east-1b": 2, "us-east-1c": 3}
nodes, eligible = [], {}
for z in zones:
    for i, g in enumerate(layout[z]):
        itype, cpu, cap, mem = groups[g]
        ip = f"10.0.{subnet[z]*32 + i}.{10+i*7}"
        name = f"ip-{ip.replace('.','-')}.ec2.internal"
        ready = not (z == "us-east-1b" and i == 6)
        spec = {"providerID": f"aws:///{z}/i-0{hashlib.sha1(name.encode()).hexdigest()[:16]}"}
        if not ready:
            spec["taints"] = [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": "2026-11-30T08:12:41Z"}, {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-11-30T08:12:46Z"}]
        if z == "us-east-1a" and i == 6:
            spec["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
        if ready and "taints" not in spec:
            eligible.setdefault(z, []).append((name, ip))
        nodes.append({
          "apiVersion": "v1", "kind": "Node",
          "metadata": {"name": name, "labels": {
              "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": itype, "beta.kubernetes.io/os": "linux",
              "eks.amazonaws.com/capacityType": "ON_DEMAND", "eks.amazonaws.com/nodegroup": f"ng-{g}",
              "failure-domain.beta.kubernetes.io/region": "us-east-1", "failure-domain.beta.kubernetes.io/zone": z,
              "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "node.kubernetes.io/instance-type": itype,
              "topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": z}},
          "spec": spec,
          "status": {"allocatable": {"cpu": cpu, "ephemeral-storage": "76224326324", "memory": mem, "pods": "58"},
                     "capacity": {"cpu": cap, "memory": mem, "pods": "58"},
                     "conditions": [
                        {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available"},
                        {"type": "Ready", "status": "True" if ready else "Unknown", "reason": "KubeletReady" if ready else "NodeStatusUnknown", "message": "kubelet is posting ready status" if ready else "Kubelet stopped posting node status."}],
                     "nodeInfo": {"architecture": "amd64", "bootID": "0", "containerRuntimeVersion": "containerd://1.7.27", "kernelVersion": "6.1.147-172.266.amzn2023.x86_64", "kubeProxyVersion": "v1.34.1-eks-113cf36", "kubeletVersion": "v1.34.1-eks-113cf36", "machineID": "0", "operatingSystem": "linux", "osImage": "Amazon Linux 2023.8.20250818", "systemUUID": "0"}}})
assert len(nodes) == 20
labels = {"app.kubernetes.io/name": "checkout", "app.kubernetes.io/component": "api"}
deployment = {
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "checkout-api", "namespace": "shop", "labels": labels, "generation": 41},
  "spec": {"replicas": 6, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600, "minReadySeconds": 5,
    "selector": {"matchLabels": labels},
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}},
    "template": {"metadata": {"labels": {**labels, "version": "v41"}},
      "spec": {
        "terminationGracePeriodSeconds": 45,
        "tolerations": [
          {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
          {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "eks.amazonaws.com/capacityType", "operator": "In", "values": ["ON_DEMAND"]}]}]}}},
        "topologySpreadConstraints": [
          {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": labels}},
          {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": labels}}],
        "containers": [
          {"name": "api", "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/checkout-api:v41",
           "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
           "readinessProbe": {"httpGet": {"path": "/healthz/ready", "port": "http"}, "periodSeconds": 5, "initialDelaySeconds": 3, "failureThreshold": 2, "successThreshold": 1, "timeoutSeconds": 1},
           "lifecycle": {"preStop": {"sleep": {"seconds": 10}}},
           "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "512Mi"}}}]}}},
  "status": {"replicas": 6, "readyReplicas": 6, "availableReplicas": 6, "updatedReplicas": 6, "observedGeneration": 41}}
service = {
  "apiVersion": "v1", "kind": "Service",
  "metadata": {"name": "checkout-api", "namespace": "shop", "annotations": {"service.kubernetes.io/topology-mode": "Auto"}, "labels": labels},
  "spec": {"type": "ClusterIP", "clusterIP": "172.20.41.17", "clusterIPs": ["172.20.41.17"], "internalTrafficPolicy": "Cluster",
           "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "selector": labels,
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}], "sessionAffinity": "None"},
  "status": {"loadBalancer": {}}}
hpa = {
  "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
  "metadata": {"name": "checkout-api", "namespace": "shop"},
  "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout-api"},
    "minReplicas": 6, "maxReplicas": 30,
    "metrics": [{"type": "Pods", "pods": {"metric": {"name": "http_requests_per_second"}, "target": {"type": "AverageValue", "averageValue": "40"}}}],
    "behavior": {"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
                 "scaleDown": {"stabilizationWindowSeconds": 300, "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}}},
  "status": {"currentReplicas": 6, "desiredReplicas": 6}}
pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "checkout-api", "namespace": "shop"},
       "spec": {"minAvailable": 4, "selector": {"matchLabels": labels}}}
other_dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "cart", "namespace": "shop"},
  "spec": {"replicas": 2, "selector": {"matchLabels": {"app.kubernetes.io/name": "cart"}},
           "template": {"metadata": {"labels": {"app.kubernetes.io/name": "cart"}}, "spec": {"containers": [{"name": "cart", "image": "cart:1"}]}}}}
rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "checkout-api-7d9f8", "namespace": "shop"}, "spec": {"selector": {"matchLabels": labels}}}
# 2 ready endpoints per zone, on the eligible nodes (the scheduler's hard zone spread).
endpoints = []
n = 0
for z in zones:
    for (name, ip) in eligible[z][:2]:
        a, b, c, d = ip.split(".")
        endpoints.append({"addresses": [f"10.0.{c}.{100+n}"], "conditions": {"ready": True, "serving": True, "terminating": False},
                          "nodeName": name, "zone": z,
                          "targetRef": {"kind": "Pod", "name": f"checkout-api-7d9f8-{n:05d}", "namespace": "shop"}})
        n += 1
slices = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [
  {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
   "metadata": {"name": "checkout-api-x7k2p", "namespace": "shop", "labels": {"kubernetes.io/service-name": "checkout-api", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
   "endpoints": endpoints, "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]}
def dump(path, obj, header):
    with open(path, "w") as f:
        f.write(header)
        yaml.safe_dump(obj, f, sort_keys=True, default_flow_style=False)
H = "# An EKS-shaped cluster for `harness import` (harness/cli/tests/import.rs): 3 zones, 20 nodes in three\n# node groups (uneven allocatable CPU), one node unreachable, one tainted for batch jobs.\n"
dump("eks-nodes.yaml", {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": nodes}, H + "# kubectl get nodes -o yaml\n")
dump("eks-workloads.yaml", {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [deployment, other_dep, rs, hpa, pdb]}, H + "# kubectl get deployments,replicasets,hpa.v2.autoscaling,pdb -n shop -o yaml\n")
dump("eks-service.yaml", service, H + "# kubectl get service checkout-api -n shop -o yaml\n")
dump("eks-endpointslices.yaml", slices, H + "# kubectl get endpointslices -n shop -l kubernetes.io/service-name=checkout-api -o yaml\n")
