#!/usr/bin/python3
"""Checks deploy/k8s and deploy/Dockerfile as an operator would find them.

  check_k8s.py overlays REPO LIMITSD   every overlay renders (kustomize_lite), differs from the
                                       others in exactly the zone-specific fields, is wired
                                       consistently, and its container's exact arguments (and
                                       the Dockerfile's CMD) pass `limitsd ... --check-config`
  check_k8s.py kubectl REPO            `kubectl kustomize` renders every overlay, to the same
                                       objects as kustomize_lite; exit 77 (skipped, with the
                                       reason) without a kubectl whose kustomize is v4 or later

Exit 0 when everything holds; otherwise every problem is printed and the exit code is 1.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kustomize_lite  # noqa: E402
from problems import Problems  # noqa: E402

SKIP = 77
ZONE_LABEL = "limitsd/zone"

# Every place an overlay's zone may appear in its rendered objects (as the whole value, or in
# a name as "-<zone>"): kind -> field paths ("*" = any list element or map key). Anything
# else that differs between overlays is a mistake (a copied overlay that kept a value).
ZONE_FIELDS = {
    "ConfigMap": ["metadata.name", "metadata.labels.limitsd/zone"],
    "Service": ["metadata.name", "metadata.labels.limitsd/zone", "spec.selector.limitsd/zone"],
    "StatefulSet": [
        "metadata.name", "metadata.labels.limitsd/zone", "spec.serviceName",
        "spec.selector.matchLabels.limitsd/zone", "spec.template.metadata.labels.limitsd/zone",
        "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms.*.matchExpressions.*.values.*",
        "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".*.labelSelector.matchLabels.limitsd/zone",
        "spec.template.spec.volumes.*.configMap.name",
        "spec.volumeClaimTemplates.*.metadata.labels.limitsd/zone",
    ],
    "PodDisruptionBudget": ["metadata.name", "metadata.labels.limitsd/zone", "spec.selector.matchLabels.limitsd/zone"],
    "ServiceMonitor": ["metadata.name", "metadata.labels.limitsd/zone", "spec.selector.matchLabels.limitsd/zone"],
}


def overlays(repo):
    zones_dir = os.path.join(repo, "deploy", "k8s", "zones")
    return {z: os.path.join(zones_dir, z) for z in sorted(os.listdir(zones_dir))}


def by_kind(objects):
    out = {}
    for o in objects:
        out.setdefault(o["kind"], []).append(o)
    return out


def one(objects, kind, problems, where):
    found = by_kind(objects).get(kind, [])
    problems.check(len(found) == 1, "%s: expected one %s, found %d" % (where, kind, len(found)))
    return found[0] if found else {}


def leaves(node, path=()):
    """(path, value) of every scalar; map keys and list indexes as path elements."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaves(v, path + (str(k),))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaves(v, path + (str(i),))
    else:
        yield path, node


def matches(pattern, path):
    parts = pattern.split(".")
    return len(parts) == len(path) and all(p == "*" or p == q for p, q in zip(parts, path))


def normalised(objects, zone):
    """The objects with the zone replaced by a placeholder, keyed by kind and name."""
    text = json.dumps(objects, sort_keys=True).replace(zone, "<zone>")
    return {(o["kind"], o["metadata"]["name"]): o for o in json.loads(text)}


# --- overlays ------------------------------------------------------------------------------

def check_zone_fields(rendered, problems):
    """Every overlay equals every other once its zone is a placeholder, and the zone appears
    in exactly the ZONE_FIELDS paths, with the overlay's own zone."""
    zones = sorted(rendered)
    reference = normalised(rendered[zones[0]], zones[0])
    for zone in zones:
        objects = rendered[zone]
        problems.check(normalised(objects, zone) == reference,
                       "%s differs from %s in more than its zone: %s" % (
                           zone, zones[0], describe_difference(normalised(objects, zone), reference)))
        for obj in objects:
            allowed = ZONE_FIELDS.get(obj["kind"])
            if not problems.check(allowed is not None, "%s: unexpected kind %s" % (zone, obj["kind"])):
                continue
            seen = set()
            for path, value in leaves(obj):
                if not isinstance(value, str):
                    continue
                for other in zones:
                    if other != zone:
                        problems.check(other not in value, "%s %s %s holds another zone: %r" % (
                            zone, obj["kind"], ".".join(path), value))
                if zone not in value:
                    continue
                pattern = next((p for p in allowed if matches(p, path)), None)
                problems.check(pattern is not None, "%s %s: the zone appears in %s (%r), not a zone field" % (
                    zone, obj["kind"], ".".join(path), value))
                if pattern:
                    seen.add(pattern)
                    if path[-1] == "name" or pattern == "spec.serviceName":
                        problems.check(re.search("-%s(-[a-z0-9]+)?$" % re.escape(zone), value) is not None,
                                       "%s %s %s: %r does not end in -%s" % (zone, obj["kind"], ".".join(path),
                                                                              value, zone))
                    else:
                        problems.check(value == zone, "%s %s %s: %r is not exactly %s" % (
                            zone, obj["kind"], ".".join(path), value, zone))
            for pattern in allowed:
                problems.check(pattern in seen, "%s %s: the zone-specific field %s is not set to the zone" % (
                    zone, obj["kind"], pattern))


def describe_difference(a, b):
    if set(a) != set(b):
        return "objects %s vs %s" % (sorted(set(a) - set(b)), sorted(set(b) - set(a)))
    for key in a:
        if a[key] != b[key]:
            la, lb = dict(leaves(a[key])), dict(leaves(b[key]))
            diff = [".".join(p) for p in sorted(set(la) | set(lb)) if la.get(p) != lb.get(p)]
            return "%s/%s at %s" % (key[0], key[1], ", ".join(diff[:5]))
    return "nothing"


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_wiring(zone, objects, problems):
    """The references inside one overlay point at each other, per zone."""
    sts = one(objects, "StatefulSet", problems, zone)
    pdb = one(objects, "PodDisruptionBudget", problems, zone)
    monitor = one(objects, "ServiceMonitor", problems, zone)
    config = one(objects, "ConfigMap", problems, zone)
    services = by_kind(objects).get("Service", [])
    if not sts:
        return
    pod_labels = sts["spec"]["template"]["metadata"]["labels"]
    problems.check(pod_labels.get(ZONE_LABEL) == zone, "%s: pods labelled %s=%r" % (zone, ZONE_LABEL,
                                                                                  pod_labels.get(ZONE_LABEL)))
    problems.check(selects(sts["spec"]["selector"]["matchLabels"], pod_labels), "%s: StatefulSet selector" % zone)
    problems.check(sts["spec"]["selector"]["matchLabels"].get(ZONE_LABEL) == zone,
                   "%s: StatefulSet selector lacks the zone" % zone)
    problems.check(pdb.get("spec", {}).get("maxUnavailable") == 1, "%s: PDB maxUnavailable is not 1" % zone)
    problems.check(pdb.get("spec", {}).get("selector", {}).get("matchLabels") == sts["spec"]["selector"]["matchLabels"],
                   "%s: the PDB does not select exactly the zone's pods" % zone)
    headless = [s for s in services if s["spec"].get("clusterIP") == "None"]
    problems.check(len(headless) == 1, "%s: expected one headless Service" % zone)
    problems.check(len(services) == 2, "%s: expected a headless and a gRPC Service" % zone)
    for svc in services:
        problems.check(selects(svc["spec"]["selector"], pod_labels) and svc["spec"]["selector"].get(ZONE_LABEL) == zone,
                       "%s: Service %s does not select the zone's pods" % (zone, svc["metadata"]["name"]))
        problems.check(any(p["name"] == "grpc" for p in svc["spec"]["ports"]),
                       "%s: Service %s has no grpc port" % (zone, svc["metadata"]["name"]))
    if headless:
        problems.check(sts["spec"]["serviceName"] == headless[0]["metadata"]["name"],
                       "%s: serviceName %s is not the headless Service" % (zone, sts["spec"]["serviceName"]))
        monitored = [s for s in services if selects(monitor.get("spec", {}).get("selector", {}).get("matchLabels"),
                                                    s["metadata"].get("labels", {}))]
        problems.check(monitored == headless, "%s: the ServiceMonitor selects %s, not the headless Service" % (
            zone, [s["metadata"]["name"] for s in monitored]))
        problems.check(monitor["spec"]["selector"]["matchLabels"].get(ZONE_LABEL) == zone,
                       "%s: the ServiceMonitor's selector lacks the zone" % zone)
    pod = sts["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    problems.check(terms == [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                                    "values": [zone]}]}],
                   "%s: node affinity is %r" % (zone, terms))
    anti = pod["affinity"].get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])
    problems.check(any(t.get("topologyKey") == "kubernetes.io/hostname" and selects(t["labelSelector"]["matchLabels"],
                                                                                    pod_labels) for t in anti),
                   "%s: no pod anti-affinity per node" % zone)
    volumes = {v["name"]: v for v in pod["volumes"]}
    problems.check(volumes.get("config", {}).get("configMap", {}).get("name") == config.get("metadata", {}).get("name"),
                   "%s: the config volume does not mount the generated ConfigMap" % zone)
    container = pod["containers"][0]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        problems.check(probe in container, "%s: no %s" % (zone, probe))
    problems.check(container.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/ready",
                   "%s: readiness is not /ready" % zone)
    problems.check("requests" in container.get("resources", {}), "%s: no resource requests" % zone)


def expand(text, env):
    """Kubernetes' $(VAR) expansion of command and args: $$ is a literal $, unknown stays."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


def pod_env(sts, pod_name):
    labels = sts["spec"]["template"]["metadata"]["labels"]
    env = {}
    for e in sts["spec"]["template"]["spec"]["containers"][0].get("env", []):
        if "value" in e:
            env[e["name"]] = expand(e["value"], env)
            continue
        field = e["valueFrom"]["fieldRef"]["fieldPath"]
        m = re.fullmatch(r"metadata\.labels\['([^']+)'\]", field)
        if field == "metadata.name":
            env[e["name"]] = pod_name
        elif m:
            env[e["name"]] = labels.get(m.group(1), "")  # a missing label is an empty value
        else:
            raise ValueError("unsupported fieldRef " + field)
    return env


def run_check_config(limitsd, argv, path_map):
    """Runs the container's argv with --check-config appended, its mount paths mapped onto the
    directories the test filled as kubelet would."""
    mapped = []
    for a in argv:
        for mount, local in sorted(path_map.items(), key=lambda kv: -len(kv[0])):
            a = a.replace(mount.rstrip("/") + "/", local.rstrip("/") + "/")
        mapped.append(a)
    return subprocess.run([limitsd] + mapped + ["--check-config"], capture_output=True, text=True)


def identity(stdout):
    """key=value pairs of --check-config's second line."""
    lines = stdout.splitlines()
    return dict(kv.split("=", 1) for kv in lines[1].split()) if len(lines) > 1 else {}


def check_container_args(where, objects, limitsd, zone, problems):
    """The pod's exact arguments, with the environment and volumes kubelet would give pod 0."""
    sts = one(objects, "StatefulSet", problems, where)
    if not sts:
        return None
    pod_name = sts["metadata"]["name"] + "-0"
    spec = sts["spec"]["template"]["spec"]
    container = spec["containers"][0]
    problems.check("command" not in container, "%s: the container overrides the image's ENTRYPOINT" % where)
    env = pod_env(sts, pod_name)
    argv = [expand(a, env) for a in container["args"]]
    config_maps = {o["metadata"]["name"]: o for o in by_kind(objects).get("ConfigMap", [])}
    volumes = {v["name"]: v for v in spec["volumes"]}
    with tempfile.TemporaryDirectory() as root:
        path_map = {}
        for mount in container["volumeMounts"]:
            local = os.path.join(root, mount["name"])
            os.makedirs(local)
            path_map[mount["mountPath"]] = local
            cm_ref = volumes.get(mount["name"], {}).get("configMap")
            if cm_ref is None:
                continue
            cm = config_maps.get(cm_ref["name"])
            if cm is None:
                problems.check(cm_ref.get("optional", False), "%s: volume %s mounts a ConfigMap %s that is not "
                                                             "deployed and not optional" % (where, mount["name"],
                                                                                           cm_ref["name"]))
                continue
            for key, value in cm["data"].items():
                with open(os.path.join(local, key), "w") as f:
                    f.write(value)
        r = run_check_config(limitsd, argv, path_map)
    if zone is None:
        return r
    if problems.check(r.returncode == 0, "%s: `limitsd %s --check-config` exited %d:\n%s%s" % (
            where, " ".join(argv), r.returncode, r.stdout, r.stderr)):
        got = identity(r.stdout)
        problems.check(got.get("zone") == zone, "%s: the pod would run as zone %r" % (where, got.get("zone")))
        problems.check(got.get("consumer_group") == "limitsd-" + zone,
                       "%s: the pod would join consumer group %r" % (where, got.get("consumer_group")))
        problems.check(got.get("instance_id") == pod_name, "%s: instance id %r" % (where, got.get("instance_id")))
        problems.check(got.get("brokers") not in (None, "embedded"), "%s: no brokers configured" % where)
    return identity(r.stdout)


def dockerfile_command(repo):
    """ENTRYPOINT + CMD of the final stage (JSON form), and the files its COPY lines place."""
    entry, cmd, copies = [], [], {}
    with open(os.path.join(repo, "deploy", "Dockerfile")) as f:
        for raw in f:
            line = raw.strip()
            if line.upper().startswith("FROM "):
                entry, cmd, copies = [], [], {}
            elif line.startswith("ENTRYPOINT "):
                entry = json.loads(line[len("ENTRYPOINT "):])
            elif line.startswith("CMD "):
                cmd = json.loads(line[len("CMD "):])
            elif line.startswith("COPY ") and "--from" not in line:
                parts = line.split()
                if len(parts) == 3:
                    copies[parts[2]] = os.path.join(repo, parts[1])
    return entry, cmd, copies


def check_dockerfile(repo, limitsd, problems):
    entry, cmd, copies = dockerfile_command(repo)
    problems.check(entry[:1] == ["/usr/local/bin/limitsd"], "Dockerfile ENTRYPOINT is %r" % entry)
    problems.check(bool(cmd), "Dockerfile has no CMD")
    argv = list(cmd)
    for image_path, local in copies.items():
        argv = [a.replace(image_path, local) for a in argv]
    r = subprocess.run([limitsd] + entry[1:] + argv + ["--check-config"], capture_output=True, text=True)
    if problems.check(r.returncode == 0, "Dockerfile CMD %r: --check-config exited %d:\n%s%s" % (
            cmd, r.returncode, r.stdout, r.stderr)):
        problems.check(identity(r.stdout).get("brokers") == "embedded",
                       "the image's default configuration is not the embedded mock cluster")


def check_overlays(repo, limitsd):
    problems = Problems()
    rendered = {}
    for zone, path in overlays(repo).items():
        try:
            rendered[zone] = kustomize_lite.render(path)
        except (kustomize_lite.KustomizeError, OSError, KeyError) as e:
            problems.check(False, "%s: %s" % (zone, e))
    problems.check(len(rendered) >= 3, "expected an overlay per zone, found %s" % sorted(rendered))
    if rendered:
        check_zone_fields(rendered, problems)
    names = {}
    groups = {}
    for zone, objects in rendered.items():
        check_wiring(zone, objects, problems)
        for o in objects:
            key = (o["kind"], o["metadata"]["name"])
            problems.check(key not in names, "%s and %s both define %s %s" % (names.get(key), zone, *key))
            names[key] = zone
        got = check_container_args(zone, objects, limitsd, zone, problems)
        if got:
            group = got.get("consumer_group")
            problems.check(group not in groups, "%s and %s share consumer group %s" % (groups.get(group), zone, group))
            groups[group] = zone
    # The base alone must not start: its pods have no zone label, so node.zone is empty.
    base = kustomize_lite.render(os.path.join(repo, "deploy", "k8s", "base"))
    r = check_container_args("base", base, limitsd, None, problems)
    problems.check(r is not None and r.returncode == 2 and "node.zone" in r.stderr,
                   "the base alone should fail --check-config on node.zone: %s" % (r.stderr if r else None))
    check_dockerfile(repo, limitsd, problems)
    return problems.finish("overlays %s" % ", ".join(sorted(rendered)))


# --- kubectl -------------------------------------------------------------------------------

def kustomize_version():
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None, "kubectl is not installed (Debian 12 packages kubectl only as kubernetes-client " \
                     "1.20, whose built-in kustomize v2.0.3 predates labels and replacements)"
    r = subprocess.run([kubectl, "version", "--client"], capture_output=True, text=True)
    m = re.search(r"Kustomize Version: v(\d+)\.(\d+)", r.stdout)
    if not m:
        return None, "%s reports no kustomize version (kubectl before 1.21, e.g. Debian's 1.20, embeds kustomize " \
                     "v2.0.3, which predates labels and replacements): %s" % (kubectl, r.stdout.strip().splitlines()[0])
    if int(m.group(1)) < 4:
        return None, "%s embeds kustomize v%s.%s; the overlays need v4 or later" % (kubectl, m.group(1), m.group(2))
    return kubectl, "kustomize v%s.%s" % (m.group(1), m.group(2))


def check_kubectl(repo):
    kubectl, why = kustomize_version()
    if kubectl is None:
        print("SKIP: " + why + "; the overlays are still checked by kustomize_lite (deploy_k8s_overlays)")
        return SKIP
    problems = Problems()
    for zone, path in overlays(repo).items():
        r = subprocess.run([kubectl, "kustomize", path], capture_output=True, text=True)
        if not problems.check(r.returncode == 0, "%s: kubectl kustomize failed: %s" % (zone, r.stderr)):
            continue
        problems.check(r.stderr.strip() == "", "%s: kubectl kustomize warned: %s" % (zone, r.stderr.strip()))
        theirs = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(r.stdout) if o}
        ours = {(o["kind"], o["metadata"]["name"]): o for o in kustomize_lite.render(path)}
        problems.check(theirs == ours, "%s: kubectl and kustomize_lite differ: %s" % (
            zone, describe_difference(theirs, ours)))
    return problems.finish("kubectl kustomize (%s) of %s" % (why, ", ".join(overlays(repo))))


def main(argv):
    if len(argv) == 4 and argv[1] == "overlays":
        return check_overlays(argv[2], argv[3])
    if len(argv) == 3 and argv[1] == "kubectl":
        return check_kubectl(argv[2])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
