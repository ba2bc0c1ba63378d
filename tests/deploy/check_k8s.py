#!/usr/bin/python3
"""Checks deploy/k8s and deploy/Dockerfile as an operator would find them.

What is rendered: every zone overlay (deploy/k8s/zones/<zone>), each one again with its
documented cloud-zone pin uncommented (in a copy), and the optional monitoring overlay.

  check_k8s.py overlays REPO LIMITSD   each renders (kustomize_lite); the zones differ in exactly
                                       the zone-specific fields and are wired consistently; the
                                       image comes from deploy/k8s/settings' images: entry and the
                                       brokers from its one literal; no node label is required
                                       unless the pin is uncommented, which adds exactly that;
                                       the monitoring overlay selects every zone's headless
                                       Service and carries deploy/monitoring's alerts; each
                                       zone's exact container arguments (and the Dockerfile's
                                       CMD) pass `limitsd ... --check-config`
  check_k8s.py schema REPO             every rendered object is valid against the Kubernetes
                                       v1.36 OpenAPI schemas and the Prometheus Operator CRDs,
                                       unknown fields included (k8s-schema/validate.mjs, the
                                       packages k8s-schema/install.sh installed), and against
                                       the API server's rules for names, labels and ports
  check_k8s.py kubectl REPO            `kubectl kustomize` renders each to the same objects as
                                       kustomize_lite; exit 77 (skipped, with the reason)
                                       without a kubectl whose kustomize is v4 or later
  check_k8s.py write-prometheusrule REPO
                                       rewrites deploy/k8s/monitoring/prometheusrule.yaml from
                                       deploy/monitoring/limitsd-alerts.yaml

Exit 0 when everything holds; otherwise every problem is printed and the exit code is 1.
"""

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kustomize_lite  # noqa: E402
from problems import Problems  # noqa: E402

SKIP = 77
ZONE_LABEL = "limitsd/zone"
NODE_ZONE_LABEL = "topology.kubernetes.io/zone"
PIN_PLACEHOLDER = "CLOUD-ZONE"
PIN_TEST_VALUE = "cloud-zone-1"  # what the pin check writes in place of the placeholder

# Every place an overlay's zone may appear in its rendered objects (as the whole value, or in
# a name as "-<zone>"): kind -> field paths ("*" = any list element or map key). Anything
# else that differs between overlays is a mistake (a copied overlay that kept a value).
ZONE_FIELDS = {
    "ConfigMap": ["metadata.name", "metadata.labels.limitsd/zone"],
    "Service": ["metadata.name", "metadata.labels.limitsd/zone", "spec.selector.limitsd/zone"],
    "StatefulSet": [
        "metadata.name", "metadata.labels.limitsd/zone", "spec.serviceName",
        "spec.selector.matchLabels.limitsd/zone", "spec.template.metadata.labels.limitsd/zone",
        "spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        ".*.podAffinityTerm.labelSelector.matchLabels.limitsd/zone",
        "spec.template.spec.volumes.*.configMap.name",
        "spec.template.spec.containers.*.env.*.valueFrom.configMapKeyRef.name",
        "spec.volumeClaimTemplates.*.metadata.labels.limitsd/zone",
    ],
    "PodDisruptionBudget": ["metadata.name", "metadata.labels.limitsd/zone", "spec.selector.matchLabels.limitsd/zone"],
}


def k8s_dir(repo, *parts):
    return os.path.join(repo, "deploy", "k8s", *parts)


def overlays(repo):
    zones_dir = k8s_dir(repo, "zones")
    return {z: os.path.join(zones_dir, z) for z in sorted(os.listdir(zones_dir))}


def uncomment_pin(text, cloud_zone):
    """The overlay's kustomization with its commented pin block ("# patches:" and the lines
    under it) uncommented and the placeholder replaced, as the README tells an operator; None
    without such a block."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == "# patches:"), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and lines[end].startswith("#   "):
        end += 1
    block = [line[2:] for line in lines[start:end]]
    if end == start + 1 or not any(PIN_PLACEHOLDER in line for line in block):
        return None
    return "".join(lines[:start] + [line.replace(PIN_PLACEHOLDER, cloud_zone) for line in block] + lines[end:])


def renderings(repo, render):
    """{name: objects or an exception} for every overlay an operator may apply: "zone-a"...,
    "zone-a+pin"... (rendered from a copy of deploy/k8s with the pin uncommented) and
    "monitoring". `render` is kustomize_lite.render or kubectl's."""
    out = {}

    def attempt(name, path):
        try:
            out[name] = render(path)
        except Exception as e:  # noqa: BLE001 — reported as the overlay's problem
            out[name] = e

    for zone, path in overlays(repo).items():
        attempt(zone, path)
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "k8s")
        shutil.copytree(k8s_dir(repo), tree)
        for zone in overlays(repo):
            kfile = os.path.join(tree, "zones", zone, "kustomization.yaml")
            with open(kfile) as f:
                pinned = uncomment_pin(f.read(), PIN_TEST_VALUE)
            if pinned is None:
                out[zone + "+pin"] = ValueError("no commented pin block (\"# patches:\" with %s) in %s" % (
                    PIN_PLACEHOLDER, os.path.relpath(kfile, tree)))
                continue
            with open(kfile, "w") as f:
                f.write(pinned)
            attempt(zone + "+pin", os.path.dirname(kfile))
    attempt("monitoring", k8s_dir(repo, "monitoring"))
    return out


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
    services = by_kind(objects).get("Service", [])
    config_maps = {o["metadata"]["name"]: o for o in by_kind(objects).get("ConfigMap", [])}
    problems.check(not any(o["apiVersion"].startswith("monitoring.coreos.com/") for o in objects),
                   "%s: a zone holds a Prometheus Operator object; those need its CRDs and belong in "
                   "deploy/k8s/monitoring" % zone)
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
    pod = sts["spec"]["template"]["spec"]
    container = pod["containers"][0]
    port_names = {p.get("name") for p in container.get("ports", [])}
    headless = [s for s in services if s["spec"].get("clusterIP") == "None"]
    problems.check(len(headless) == 1, "%s: expected one headless Service" % zone)
    problems.check(len(services) == 2, "%s: expected a headless and a gRPC Service" % zone)
    for svc in services:
        name = svc["metadata"]["name"]
        problems.check(selects(svc["spec"]["selector"], pod_labels) and svc["spec"]["selector"].get(ZONE_LABEL) == zone,
                       "%s: Service %s does not select the zone's pods" % (zone, name))
        problems.check(any(p["name"] == "grpc" for p in svc["spec"]["ports"]), "%s: Service %s has no grpc port" % (
            zone, name))
        for port in svc["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            problems.check(target in port_names if isinstance(target, str) else
                           any(p["containerPort"] == target for p in container.get("ports", [])),
                           "%s: Service %s port %s targets %r, which the container does not expose" % (
                               zone, name, port["name"], target))
    if headless:
        problems.check(sts["spec"]["serviceName"] == headless[0]["metadata"]["name"],
                       "%s: serviceName %s is not the headless Service" % (zone, sts["spec"]["serviceName"]))
    # Schedulable as written: no node label required (a cloud's nodes carry none of ours).
    problems.check("nodeAffinity" not in pod.get("affinity", {}) and "nodeSelector" not in pod,
                   "%s: the pods require node labels by default: affinity %r, nodeSelector %r" % (
                       zone, pod.get("affinity", {}).get("nodeAffinity"), pod.get("nodeSelector")))
    anti = pod.get("affinity", {}).get("podAntiAffinity", {})
    problems.check("requiredDuringSchedulingIgnoredDuringExecution" not in anti,
                   "%s: a required pod anti-affinity leaves pods Pending on a cluster with fewer nodes than "
                   "replicas" % zone)
    problems.check(any(t["podAffinityTerm"].get("topologyKey") == "kubernetes.io/hostname"
                       and selects(t["podAffinityTerm"]["labelSelector"]["matchLabels"], pod_labels)
                       and t["podAffinityTerm"]["labelSelector"]["matchLabels"].get(ZONE_LABEL) == zone
                       for t in anti.get("preferredDuringSchedulingIgnoredDuringExecution", [])),
                   "%s: no preferred pod anti-affinity per node within the zone" % zone)
    volumes = {v["name"]: v for v in pod["volumes"]}
    problems.check(volumes.get("config", {}).get("configMap", {}).get("name") in config_maps,
                   "%s: the config volume does not mount a ConfigMap of the overlay" % zone)
    for e in container.get("env", []):
        ref = e.get("valueFrom", {}).get("configMapKeyRef")
        if ref:
            problems.check(ref.get("key") in config_maps.get(ref["name"], {}).get("data", {}),
                           "%s: env %s reads key %s of ConfigMap %s, which the overlay does not hold" % (
                               zone, e["name"], ref.get("key"), ref["name"]))
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        problems.check(probe in container, "%s: no %s" % (zone, probe))
        port = container.get(probe, {}).get("httpGet", {}).get("port")
        problems.check(port in port_names, "%s: %s's port %r is not a container port" % (zone, probe, port))
    problems.check(container.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/ready",
                   "%s: readiness is not /ready" % zone)
    problems.check("requests" in container.get("resources", {}), "%s: no resource requests" % zone)


def check_pin(zone, plain, pinned, problems):
    """The uncommented pin adds exactly a nodeSelector on the zone's cloud-zone label."""
    where = zone + "+pin"
    a = {(o["kind"], o["metadata"]["name"]): o for o in plain}
    b = {(o["kind"], o["metadata"]["name"]): copy.deepcopy(o) for o in pinned}
    for key, obj in b.items():
        if key[0] == "StatefulSet":
            spec = obj["spec"]["template"]["spec"]
            problems.check(spec.pop("nodeSelector", None) == {NODE_ZONE_LABEL: PIN_TEST_VALUE},
                           "%s: the pin does not set nodeSelector {%s: <cloud zone>}" % (where, NODE_ZONE_LABEL))
    problems.check(a == b, "%s: the pin changes more than the nodeSelector: %s" % (where, describe_difference(b, a)))


def settings(repo):
    """deploy/k8s/settings' kustomization (the image and brokers an operator sets)."""
    with open(k8s_dir(repo, "settings", "kustomization.yaml")) as f:
        return yaml.safe_load(f)


def settings_brokers(s):
    for gen in s.get("configMapGenerator", []):
        for literal in gen.get("literals", []):
            key, _, value = literal.partition("=")
            if gen["name"] == "limitsd-kafka" and key == "brokers":
                return value
    return None


def check_settings(repo, zones, problems):
    """The image and the brokers are set in deploy/k8s/settings and nowhere else."""
    s = settings(repo)
    problems.check(s.get("kind") == "Component",
                   "deploy/k8s/settings is a %s, not a kustomize Component" % s.get("kind"))
    images = s.get("images", [])
    image = images[0] if len(images) == 1 else {}
    problems.check(len(images) == 1 and image.get("name") == "limitsd" and image.get("newName"),
                   "deploy/k8s/settings: expected one images: entry for limitsd with newName, found %r" % images)
    problems.check(image.get("newTag") not in (None, "", "latest"),
                   "deploy/k8s/settings: the image's newTag is %r; a fixed tag (not latest) keeps every pod "
                   "on one build" % image.get("newTag"))
    expected_image = "%s:%s" % (image.get("newName"), image.get("newTag"))
    brokers = settings_brokers(s)
    problems.check(bool(brokers), "deploy/k8s/settings: no limitsd-kafka literal brokers=...")
    # Nowhere else: no other images: entry, no brokers in the TOML, the literal only here.
    with open(k8s_dir(repo, "base", "statefulset.yaml")) as f:
        base_images = [c.get("image") for c in yaml.safe_load(f)["spec"]["template"]["spec"]["containers"]]
    problems.check(base_images == [image.get("name")],
                   "base/statefulset.yaml's image is %r, not the bare name %r that settings' images: entry "
                   "replaces" % (base_images, image.get("name")))
    for root, _, files in os.walk(k8s_dir(repo)):
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, k8s_dir(repo))
            with open(path) as f:
                text = f.read()
            if name == "kustomization.yaml" and rel != os.path.join("settings", "kustomization.yaml"):
                problems.check("images" not in (yaml.safe_load(text) or {}),
                               "deploy/k8s/%s sets images: too; the image belongs in settings alone" % rel)
            if name.endswith(".toml"):
                problems.check("brokers" not in tomllib.loads(text).get("kafka", {}),
                               "deploy/k8s/%s sets kafka.brokers; the brokers belong in settings alone" % rel)
            elif rel != os.path.join("settings", "kustomization.yaml"):
                # $(KAFKA_BROKERS) reads them from settings; any other value sets them here.
                problems.check(not re.search(r"^[^#\n]*brokers\s*=\s*(?!\$\()\S", text, re.M)
                               and not (brokers and brokers in text),
                               "deploy/k8s/%s sets brokers; they belong in settings alone" % rel)
    for zone, objects in zones.items():
        for sts in by_kind(objects).get("StatefulSet", []):
            for c in sts["spec"]["template"]["spec"]["containers"]:
                problems.check(c["image"] == expected_image, "%s: container %s runs image %r, not settings' %r" % (
                    zone, c["name"], c["image"], expected_image))
    return brokers


def alert_groups(repo):
    with open(os.path.join(repo, "deploy", "monitoring", "limitsd-alerts.yaml")) as f:
        return yaml.safe_load(f)["groups"]


def check_monitoring(repo, monitoring, zones, problems):
    """One ServiceMonitor scraping every zone's headless Service, one PrometheusRule holding
    deploy/monitoring's alerts, and nothing else (the zones need no CRD)."""
    where = "monitoring"
    problems.check(sorted(o["kind"] for o in monitoring) == ["PrometheusRule", "ServiceMonitor"],
                   "%s: expected a ServiceMonitor and a PrometheusRule, found %s" % (
                       where, sorted(o["kind"] for o in monitoring)))
    monitor = one(monitoring, "ServiceMonitor", problems, where)
    rule = one(monitoring, "PrometheusRule", problems, where)
    if monitor:
        selector = monitor["spec"].get("selector", {}).get("matchLabels", {})
        ports = {e.get("port") for e in monitor["spec"].get("endpoints", [])}
        problems.check(ZONE_LABEL in monitor["spec"].get("podTargetLabels", []),
                       "%s: the ServiceMonitor does not copy the pods' %s label (limitsd_zone)" % (where, ZONE_LABEL))
        for zone, objects in zones.items():
            services = by_kind(objects).get("Service", [])
            picked = [s for s in services if selects(selector, s["metadata"].get("labels", {}))]
            headless = [s for s in services if s["spec"].get("clusterIP") == "None"]
            problems.check(picked == headless and headless,
                           "%s: the ServiceMonitor selects %s of %s, not its headless Service" % (
                               where, [s["metadata"]["name"] for s in picked], zone))
            for svc in picked:
                problems.check(ports <= {p["name"] for p in svc["spec"]["ports"]},
                               "%s: the ServiceMonitor scrapes ports %s; %s has %s" % (
                                   where, sorted(ports), svc["metadata"]["name"],
                                   [p["name"] for p in svc["spec"]["ports"]]))
    if rule:
        problems.check(rule["spec"].get("groups") == alert_groups(repo),
                       "%s: prometheusrule.yaml differs from deploy/monitoring/limitsd-alerts.yaml; regenerate it: "
                       "tests/deploy/check_k8s.py write-prometheusrule ." % where)


def expand(text, env):
    """Kubernetes' $(VAR) expansion of command and args: $$ is a literal $, unknown stays."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


def pod_env(sts, pod_name, config_maps):
    """The container's environment as kubelet would set it for pod `pod_name`; a variable read
    from a ConfigMap that is not there is left out (kubelet would not start the container)."""
    labels = sts["spec"]["template"]["metadata"]["labels"]
    env = {}
    for e in sts["spec"]["template"]["spec"]["containers"][0].get("env", []):
        if "value" in e:
            env[e["name"]] = expand(e["value"], env)
            continue
        source = e["valueFrom"]
        if "configMapKeyRef" in source:
            ref = source["configMapKeyRef"]
            data = config_maps.get(ref["name"], {}).get("data", {})
            if ref["key"] in data:
                env[e["name"]] = data[ref["key"]]
            continue
        field = source["fieldRef"]["fieldPath"]
        m = re.fullmatch(r"metadata\.labels\['([^']+)'\]", field)
        if field == "metadata.name":
            env[e["name"]] = pod_name
        elif m:
            env[e["name"]] = labels.get(m.group(1), "")  # a missing label is an empty value
        else:
            raise ValueError("unsupported fieldRef " + field)
    return env


def materialise_pod(objects, root):
    """Pod 0 of the overlay's StatefulSet as kubelet would start it: its name, its arguments
    with $(VAR) expanded, and {mountPath: directory} for its volume mounts, each a directory
    under `root`, a ConfigMap volume's filled with the ConfigMap's keys. Also what would keep
    kubelet from starting it (a ConfigMap that is missing and not optional). deploy/test-image.sh
    runs the same arguments in the image."""
    sts = by_kind(objects)["StatefulSet"][0]
    pod_name = sts["metadata"]["name"] + "-0"
    spec = sts["spec"]["template"]["spec"]
    container = spec["containers"][0]
    config_maps = {o["metadata"]["name"]: o for o in by_kind(objects).get("ConfigMap", [])}
    blockers = []
    for e in container.get("env", []):
        ref = e.get("valueFrom", {}).get("configMapKeyRef")
        if ref and ref["key"] not in config_maps.get(ref["name"], {}).get("data", {}) and not ref.get("optional"):
            blockers.append("env %s reads ConfigMap %s key %s, which is not deployed" % (e["name"], ref["name"],
                                                                                       ref["key"]))
    env = pod_env(sts, pod_name, config_maps)
    argv = [expand(a, env) for a in container["args"]]
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {}
    for mount in container["volumeMounts"]:
        local = os.path.join(root, mount["name"])
        os.makedirs(local)
        mounts[mount["mountPath"]] = local
        cm_ref = volumes.get(mount["name"], {}).get("configMap")
        if cm_ref is None:
            continue
        cm = config_maps.get(cm_ref["name"])
        if cm is None:
            if not cm_ref.get("optional", False):
                blockers.append("volume %s mounts ConfigMap %s, which is not deployed and not optional" % (
                    mount["name"], cm_ref["name"]))
            continue
        for key, value in cm["data"].items():
            with open(os.path.join(local, key), "w") as f:
                f.write(value)
    return pod_name, argv, mounts, blockers


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


def check_container_args(where, objects, limitsd, zone, brokers, problems):
    """The pod's exact arguments, with the environment and volumes kubelet would give pod 0."""
    sts = one(objects, "StatefulSet", problems, where)
    if not sts:
        return None
    problems.check("command" not in sts["spec"]["template"]["spec"]["containers"][0],
                   "%s: the container overrides the image's ENTRYPOINT" % where)
    with tempfile.TemporaryDirectory() as root:
        pod_name, argv, mounts, blockers = materialise_pod(objects, root)
        for b in blockers:
            problems.check(zone is None, "%s: kubelet would not start the pod: %s" % (where, b))
        r = run_check_config(limitsd, argv, mounts)
    if zone is None:
        return r
    if problems.check(r.returncode == 0, "%s: `limitsd %s --check-config` exited %d:\n%s%s" % (
            where, " ".join(argv), r.returncode, r.stdout, r.stderr)):
        got = identity(r.stdout)
        problems.check(got.get("zone") == zone, "%s: the pod would run as zone %r" % (where, got.get("zone")))
        problems.check(got.get("consumer_group") == "limitsd-" + zone,
                       "%s: the pod would join consumer group %r" % (where, got.get("consumer_group")))
        problems.check(got.get("instance_id") == pod_name, "%s: instance id %r" % (where, got.get("instance_id")))
        problems.check(got.get("brokers") == brokers, "%s: the pod would use brokers %r, not settings' %r" % (
            where, got.get("brokers"), brokers))
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


def rendered_or_report(renders, problems):
    """The renderings that succeeded; a failed one is a problem."""
    out = {}
    for name, objects in renders.items():
        if problems.check(not isinstance(objects, Exception), "%s: does not render: %s" % (name, objects)):
            out[name] = objects
    return out


def check_overlays(repo, limitsd):
    problems = Problems()
    rendered = rendered_or_report(renderings(repo, kustomize_lite.render), problems)
    zones = {z: rendered[z] for z in overlays(repo) if z in rendered}
    problems.check(len(zones) >= 3, "expected an overlay per zone, found %s" % sorted(zones))
    if zones:
        check_zone_fields(zones, problems)
    brokers = check_settings(repo, zones, problems)
    names = {}
    groups = {}
    for zone, objects in zones.items():
        check_wiring(zone, objects, problems)
        if zone + "+pin" in rendered:
            check_pin(zone, objects, rendered[zone + "+pin"], problems)
        for o in objects:
            key = (o["kind"], o["metadata"]["name"])
            problems.check(key not in names, "%s and %s both define %s %s" % (names.get(key), zone, *key))
            names[key] = zone
        got = check_container_args(zone, objects, limitsd, zone, brokers, problems)
        if got:
            group = got.get("consumer_group")
            problems.check(group not in groups, "%s and %s share consumer group %s" % (groups.get(group), zone, group))
            groups[group] = zone
    if "monitoring" in rendered:
        check_monitoring(repo, rendered["monitoring"], zones, problems)
    # The base alone must not start: its pods have no zone label, so node.zone is empty.
    base = kustomize_lite.render(k8s_dir(repo, "base"))
    r = check_container_args("base", base, limitsd, None, brokers, problems)
    problems.check(r is not None and r.returncode == 2 and "node.zone" in r.stderr,
                   "the base alone should fail --check-config on node.zone: %s" % (r.stderr if r else None))
    check_dockerfile(repo, limitsd, problems)
    return problems.finish("overlays %s" % ", ".join(sorted(rendered)))


# --- schema --------------------------------------------------------------------------------

DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = r"%s(\.%s)*" % (DNS_LABEL, DNS_LABEL)
LABEL_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"


def api_server_rules(where, obj, problems):
    """What the API server validates beyond the OpenAPI schema, for the fields deploy/k8s
    uses (k8s.io/apimachinery's validation): names, label keys and values, port names."""
    meta = obj.get("metadata", {})
    name = meta.get("name", "")
    what = "%s: %s/%s" % (where, obj.get("kind"), name)
    problems.check(re.fullmatch(DNS_SUBDOMAIN, name) is not None and len(name) <= 253,
                   "%s: the name is not a DNS subdomain" % what)
    if obj.get("kind") == "Service":
        problems.check(re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name) is not None and len(name) <= 63,
                       "%s: a Service name must be a DNS-1035 label (63 characters at most)" % what)
    if obj.get("kind") == "StatefulSet":
        # Its pods get the label controller-revision-hash=<name>-<10 characters>: 63 at most.
        problems.check(re.fullmatch(DNS_LABEL, name) is not None and len(name) <= 52,
                       "%s: a StatefulSet name must be a DNS label of 52 characters at most" % what)

    def check_labels(labels, path):
        for key, value in (labels or {}).items():
            prefix, _, base = key.rpartition("/")
            problems.check((not prefix or (re.fullmatch(DNS_SUBDOMAIN, prefix) and len(prefix) <= 253))
                           and re.fullmatch(LABEL_NAME, base) is not None and len(base) <= 63,
                           "%s: %s: label key %r is invalid" % (what, path, key))
            problems.check(isinstance(value, str) and len(value) <= 63
                           and (value == "" or re.fullmatch(LABEL_NAME, value) is not None),
                           "%s: %s: label value %r is invalid" % (what, path, value))

    for path, value in leaves_of(obj):
        if path[-2:] == ("metadata", "labels") or path[-1:] == ("matchLabels",):
            check_labels(value, ".".join(path))
    pod = obj.get("spec", {}).get("template", {}).get("spec")
    if pod:
        for c in pod.get("containers", []):
            for port in c.get("ports", []):
                n = port.get("name", "")
                problems.check(re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", n) is not None and len(n) <= 15
                               and re.search("[a-z]", n) is not None and "--" not in n,
                               "%s: container port name %r is not an IANA service name" % (what, n))
            for e in c.get("env", []):
                problems.check(re.fullmatch(r"[-._a-zA-Z][-._a-zA-Z0-9]*", e["name"]) is not None,
                               "%s: env name %r is invalid" % (what, e["name"]))
            claims = {t["metadata"]["name"] for t in obj["spec"].get("volumeClaimTemplates", [])}
            for m in c.get("volumeMounts", []):
                problems.check(m["name"] in {v["name"] for v in pod.get("volumes", [])} | claims,
                               "%s: volume mount %s names no volume" % (what, m["name"]))
    if obj.get("kind") == "ConfigMap":
        for key in obj.get("data", {}):
            problems.check(re.fullmatch(r"[-._a-zA-Z0-9]+", key) is not None and len(key) <= 253,
                           "%s: ConfigMap key %r is invalid" % (what, key))


def leaves_of(node, path=()):
    """(path, node) of every map in `node`, depth first."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from leaves_of(v, path + (str(k),))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaves_of(v, path + (str(i),))


def schema_packages(repo):
    """The directory holding the schema packages' node_modules, or None and why not."""
    script = os.path.join(repo, "tests", "deploy", "k8s-schema", "install.sh")
    r = subprocess.run([script, "--dir"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return r.stdout.strip(), None


def validate_schemas(repo, items, problems):
    """Runs k8s-schema/validate.mjs over [{"where", "object"}] in a scratch directory whose
    node_modules is the installed packages'; returns its summary line."""
    packages, why = schema_packages(repo)
    node = shutil.which("node")
    if not problems.check(packages is not None and node is not None,
                          "cannot validate: %s" % (why or "node is not installed (scripts/install-deps.sh)")):
        return ""
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.join(packages, "node_modules"), os.path.join(tmp, "node_modules"))
        with open(os.path.join(tmp, "package.json"), "w") as f:
            json.dump({"type": "module"}, f)
        shutil.copy(os.path.join(repo, "tests", "deploy", "k8s-schema", "validate.mjs"), tmp)
        with open(os.path.join(tmp, "objects.json"), "w") as f:
            json.dump(items, f)
        r = subprocess.run([node, os.path.join(tmp, "validate.mjs"), os.path.join(tmp, "objects.json")],
                           capture_output=True, text=True, cwd=tmp)
    lines = r.stdout.strip().splitlines()
    for line in lines:
        if line.startswith("FAIL: "):
            problems.check(False, line[len("FAIL: "):])
    problems.check(r.returncode in (0, 1) and lines, "validate.mjs exited %d: %s%s" % (r.returncode, r.stdout,
                                                                                         r.stderr))
    problems.check(r.returncode != 1 or any(line.startswith("FAIL: ") for line in lines),
                   "validate.mjs failed without saying why: %s" % r.stderr)
    return lines[-1] if lines else ""


def check_schema(repo):
    problems = Problems()
    rendered = rendered_or_report(renderings(repo, kustomize_lite.render), problems)
    items = []
    for name, objects in sorted(rendered.items()):
        for obj in objects:
            items.append({"where": name, "object": obj})
            api_server_rules(name, obj, problems)
    summary = validate_schemas(repo, items, problems)
    return problems.finish("%s; %s" % (summary or "schemas not checked", ", ".join(sorted(rendered))))


# --- kubectl -------------------------------------------------------------------------------

def kustomize_version():
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None, "kubectl is not installed (Debian 12 packages kubectl only as kubernetes-client " \
                     "1.20, whose built-in kustomize v2.0.3 predates labels, components and replacements)"
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
    warnings = []

    def render(path):
        r = subprocess.run([kubectl, "kustomize", path], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("kubectl kustomize failed: " + r.stderr.strip())
        if r.stderr.strip():
            warnings.append("%s: kubectl kustomize warned: %s" % (path, r.stderr.strip()))
        return [o for o in yaml.safe_load_all(r.stdout) if o]

    theirs = renderings(repo, render)
    ours = renderings(repo, kustomize_lite.render)
    for w in warnings:
        problems.check(False, w)
    for name in sorted(theirs):
        if isinstance(theirs[name], Exception) or isinstance(ours[name], Exception):
            problems.check(False, "%s: kubectl: %s; kustomize_lite: %s" % (
                name, theirs[name] if isinstance(theirs[name], Exception) else "renders",
                ours[name] if isinstance(ours[name], Exception) else "renders"))
            continue
        a = {(o["kind"], o["metadata"]["name"]): o for o in theirs[name]}
        b = {(o["kind"], o["metadata"]["name"]): o for o in ours[name]}
        problems.check(a == b, "%s: kubectl and kustomize_lite differ: %s" % (name, describe_difference(a, b)))
    return problems.finish("kubectl kustomize (%s) of %s" % (why, ", ".join(sorted(theirs))))


# --- the PrometheusRule --------------------------------------------------------------------

PROMETHEUS_RULE_HEADER = """\
# Generated from deploy/monitoring/limitsd-alerts.yaml (its comments explain each alert) by
# `tests/deploy/check_k8s.py write-prometheusrule .`; deploy_k8s_overlays fails when the two
# differ. Needs the Prometheus Operator's CRDs, like everything in this directory.
"""


def write_prometheus_rule(repo):
    class Dumper(yaml.SafeDumper):
        def increase_indent(self, flow=False, indentless=False):  # lists indented, as yamllint wants
            return super().increase_indent(flow, False)

    Dumper.add_representer(str, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v,
                                                                style="|" if "\n" in v else None))
    rule = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
            "metadata": {"name": "limitsd", "labels": {"app.kubernetes.io/name": "limitsd"}},
            "spec": {"groups": alert_groups(repo)}}
    path = k8s_dir(repo, "monitoring", "prometheusrule.yaml")
    with open(path, "w") as f:
        f.write(PROMETHEUS_RULE_HEADER)
        yaml.dump(rule, f, Dumper=Dumper, sort_keys=False, width=110, allow_unicode=True)
    print("wrote " + path)
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "overlays":
        return check_overlays(argv[2], argv[3])
    if len(argv) == 3 and argv[1] == "schema":
        return check_schema(argv[2])
    if len(argv) == 3 and argv[1] == "kubectl":
        return check_kubectl(argv[2])
    if len(argv) == 3 and argv[1] == "write-prometheusrule":
        return write_prometheus_rule(argv[2])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
