"""Renders a kustomization the way `kubectl kustomize` (kustomize v5) does, for exactly the
features deploy/k8s uses: resources (files and directories), components, configMapGenerator
(files and literals, with kustomize's content-hash suffix), JSON 6902 patches selected by
kind, nameSuffix (and the references to renamed resources), labels (with includeSelectors),
images and replacements, in kustomize's order. Anything else is an error, not a silent
difference: CI machines without a recent kubectl still validate the overlays with this, and
where kubectl exists check_k8s.py asserts both render the same objects.
"""

import copy
import hashlib
import json
import os

import yaml

SUPPORTED_KEYS = {"apiVersion", "kind", "resources", "components", "configMapGenerator", "patches", "nameSuffix",
                  "labels", "images", "replacements"}

# Where kustomize's label transformer writes with includeSelectors, besides every object's
# metadata.labels: kustomize's commonLabels field specs for the kinds deploy/k8s uses, as
# (path, create when missing); a [] in a path means every list element.
_AFFINITY = ["spec", "template", "spec", "affinity"]
SELECTOR_PATHS = {
    "Service": [(["spec", "selector"], True)],
    "StatefulSet": [
        (["spec", "selector", "matchLabels"], True),
        (["spec", "template", "metadata", "labels"], True),
        (["spec", "volumeClaimTemplates", [], "metadata", "labels"], True),
    ] + [(_AFFINITY + [kind, "preferredDuringSchedulingIgnoredDuringExecution", [], "podAffinityTerm",
                       "labelSelector", "matchLabels"], False) for kind in ("podAffinity", "podAntiAffinity")]
      + [(_AFFINITY + [kind, "requiredDuringSchedulingIgnoredDuringExecution", [], "labelSelector", "matchLabels"],
          False) for kind in ("podAffinity", "podAntiAffinity")],
    "PodDisruptionBudget": [(["spec", "selector", "matchLabels"], False)],
}

# References kustomize updates when the referenced object is renamed: kind -> paths in the
# referring objects, by referring kind.
_CONTAINERS = [["spec", "template", "spec", kind, []] for kind in ("containers", "initContainers")]
NAME_REFERENCES = {
    "ConfigMap": {"StatefulSet": [["spec", "template", "spec", "volumes", [], "configMap", "name"]]
                  + [c + ["env", [], "valueFrom", "configMapKeyRef", "name"] for c in _CONTAINERS]
                  + [c + ["envFrom", [], "configMapRef", "name"] for c in _CONTAINERS]},
    "Service": {"StatefulSet": [["spec", "serviceName"]]},
}


class KustomizeError(Exception):
    pass


def _walk(node, path, create=False):
    """Yields (parent, key) for every place `path` reaches ([] = each list element)."""
    if not path:
        return
    head, rest = path[0], path[1:]
    if head == []:
        if isinstance(node, list):
            for item in node:
                yield from _walk(item, rest, create)
        return
    if not isinstance(node, dict):
        return
    if not rest:
        if head in node or create:
            yield node, head
        return
    if head not in node:
        if not create:
            return
        node[head] = {}
    yield from _walk(node[head], rest, create)


def _parse_field_path(text):
    """kustomize's dotted field path; a number indexes a list."""
    return [int(p) if p.isdigit() else p for p in text.split(".")]


def _get(node, path):
    for p in path:
        if isinstance(p, int):
            if not isinstance(node, list) or p >= len(node):
                return None
            node = node[p]
        else:
            if not isinstance(node, dict) or p not in node:
                return None
            node = node[p]
    return node


def _set(node, path, value, create):
    for i, p in enumerate(path):
        last = i == len(path) - 1
        if isinstance(p, int):
            if not isinstance(node, list) or p >= len(node):
                raise KustomizeError("replacement target index %s out of range" % ".".join(map(str, path)))
            if last:
                node[p] = value
                return
            node = node[p]
        else:
            if not isinstance(node, dict):
                raise KustomizeError("replacement target %s is not a map" % ".".join(map(str, path)))
            if last:
                if p not in node and not create:
                    raise KustomizeError("replacement target %s is missing" % ".".join(map(str, path)))
                node[p] = value
                return
            if p not in node:
                if not create:
                    raise KustomizeError("replacement target %s is missing" % ".".join(map(str, path)))
                node[p] = {}
            node = node[p]


def config_map_hash(data):
    """kustomize's name suffix for a generated ConfigMap: sha256 of the JSON of kind, an empty
    name and data (Go's json.Marshal: sorted keys, HTML characters escaped), its first ten hex
    digits with 0 1 3 a e spelt g h k m t."""
    text = json.dumps({"data": data, "kind": "ConfigMap", "name": ""}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    for ch, esc in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return digest.translate(str.maketrans("013ae", "ghkmt"))


class _Object:
    def __init__(self, doc, generated=False):
        self.doc = doc
        self.generated = generated  # a configMapGenerator ConfigMap: hash suffix at the end
        self.original_name = doc["metadata"]["name"]

    @property
    def kind(self):
        return self.doc["kind"]


def _rename(objects, obj, new_name):
    old = obj.doc["metadata"]["name"]
    obj.doc["metadata"]["name"] = new_name
    for referrer in objects:
        for path in NAME_REFERENCES.get(obj.kind, {}).get(referrer.kind, []):
            for parent, key in _walk(referrer.doc, path):
                if parent[key] == old:
                    parent[key] = new_name


def _load(directory, accumulated=None):
    """The objects of the kustomization in `directory`; a Component's transforms `accumulated`,
    the objects of the kustomization that lists it."""
    path = os.path.join(directory, "kustomization.yaml")
    if not os.path.exists(path):
        raise KustomizeError("no kustomization.yaml in %s" % directory)
    with open(path) as f:
        k = yaml.safe_load(f)
    unsupported = set(k) - SUPPORTED_KEYS
    if unsupported:
        raise KustomizeError("%s: kustomize_lite does not implement %s" % (path, ", ".join(sorted(unsupported))))
    component = k.get("kind") == "Component"
    if component != (accumulated is not None):
        raise KustomizeError("%s: a %s cannot be used as a %s" % (
            path, k.get("kind", "Kustomization"), "component" if accumulated is not None else "resource"))

    # kustomize's order: resources, components, generators, then the transformers.
    objects = accumulated if component else []
    for res in k.get("resources", []):
        full = os.path.normpath(os.path.join(directory, res))
        if os.path.isdir(full):
            objects.extend(_load(full))
        else:
            with open(full) as f:
                objects.extend(_Object(d) for d in yaml.safe_load_all(f) if d)
    for comp in k.get("components", []):
        _load(os.path.normpath(os.path.join(directory, comp)), objects)
    for gen in k.get("configMapGenerator", []):
        if set(gen) - {"name", "files", "literals"}:
            raise KustomizeError("%s: configMapGenerator supports name, files and literals only" % path)
        data = {}
        for name in gen.get("files", []):
            with open(os.path.join(directory, name)) as f:
                data[os.path.basename(name)] = f.read()
        for literal in gen.get("literals", []):
            key, sep, value = literal.partition("=")
            if not sep:
                raise KustomizeError("%s: literal %r is not key=value" % (path, literal))
            data[key] = value
        objects.append(_Object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": gen["name"]},
                                "data": data}, generated=True))

    for patch in k.get("patches", []):
        _patch(objects, patch, path)

    suffix = k.get("nameSuffix", "")
    if suffix:
        for obj in objects:
            _rename(objects, obj, obj.doc["metadata"]["name"] + suffix)

    for entry in k.get("labels", []):
        if set(entry) - {"pairs", "includeSelectors"}:
            raise KustomizeError("%s: labels supports pairs and includeSelectors only" % path)
        for obj in objects:
            targets = [(["metadata", "labels"], True)]
            if entry.get("includeSelectors"):
                targets += SELECTOR_PATHS.get(obj.kind, [])
            for target, create in targets:
                for parent, key in _walk(obj.doc, target, create=create):
                    if parent.get(key) is None:
                        parent[key] = {}
                    parent[key].update(entry["pairs"])

    for image in k.get("images", []):
        if set(image) - {"name", "newName", "newTag"}:
            raise KustomizeError("%s: images supports name, newName and newTag only" % path)
        for obj in objects:
            for containers in _CONTAINERS:
                for parent, key in _walk(obj.doc, containers + ["image"]):
                    parent[key] = _set_image(parent[key], image)

    for rep in k.get("replacements", []):
        source = rep["source"]
        matches = [o for o in objects if o.kind == source["kind"]]
        if len(matches) != 1:
            raise KustomizeError("%s: replacement source %s matches %d objects" % (path, source["kind"], len(matches)))
        value = _get(matches[0].doc, _parse_field_path(source["fieldPath"]))
        if value is None:
            raise KustomizeError("%s: replacement source %s is missing" % (path, source["fieldPath"]))
        for target in rep["targets"]:
            create = target.get("options", {}).get("create", False)
            for obj in objects:
                if obj.kind != target["select"]["kind"]:
                    continue
                for fp in target["fieldPaths"]:
                    _set(obj.doc, _parse_field_path(fp), copy.deepcopy(value), create)
    return objects


def _split_image(image):
    """(name, tag or None, digest or None) of an image reference."""
    name, digest = (image.split("@", 1) + [None])[:2]
    colon = name.rfind(":")
    if colon > name.rfind("/"):
        return name[:colon], name[colon + 1:], digest
    return name, None, digest


def _set_image(image, entry):
    """kustomize's image transformer for one entry: a matching name gets newName and newTag."""
    name, tag, digest = _split_image(image)
    if name != entry["name"]:
        return image
    name = entry.get("newName", name)
    if "newTag" in entry:
        return "%s:%s" % (name, entry["newTag"])
    return name + (":" + tag if tag else "") + ("@" + digest if digest else "")


def _patch(objects, patch, path):
    """A `patches` entry holding an inline JSON 6902 patch (add, replace, remove) for the
    objects of target's kind (and name, if given)."""
    if set(patch) - {"target", "patch"} or set(patch.get("target", {})) - {"kind", "name"}:
        raise KustomizeError("%s: patches supports an inline patch with a target kind and name only" % path)
    ops = yaml.safe_load(patch["patch"])
    if not isinstance(ops, list):
        raise KustomizeError("%s: kustomize_lite implements JSON 6902 patches only" % path)
    target = patch["target"]
    for obj in objects:
        if obj.kind != target["kind"] or target.get("name", obj.doc["metadata"]["name"]) != obj.doc["metadata"]["name"]:
            continue
        for op in ops:
            if op["op"] not in ("add", "replace", "remove") or set(op) - {"op", "path", "value"}:
                raise KustomizeError("%s: unsupported patch operation %r" % (path, op))
            parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
            parent = _get(obj.doc, [int(p) if p.isdigit() else p for p in parts[:-1]])
            last = parts[-1]
            if isinstance(parent, list):
                index = len(parent) if last == "-" else int(last)
                if op["op"] == "add":
                    parent.insert(index, copy.deepcopy(op["value"]))
                elif op["op"] == "replace":
                    parent[index] = copy.deepcopy(op["value"])
                else:
                    del parent[index]
            elif isinstance(parent, dict) and (op["op"] == "add" or last in parent):
                if op["op"] == "remove":
                    del parent[last]
                else:
                    parent[last] = copy.deepcopy(op["value"])
            else:
                raise KustomizeError("%s: patch path %s does not exist in %s %s" % (
                    path, op["path"], obj.kind, obj.doc["metadata"]["name"]))


def render(directory):
    """The objects `kubectl kustomize directory` prints, as a list of dicts."""
    objects = _load(directory)
    for obj in objects:
        if obj.generated:
            _rename(objects, obj, obj.doc["metadata"]["name"] + "-" + config_map_hash(obj.doc["data"]))
            obj.generated = False
    return [o.doc for o in objects]
