// Validates Kubernetes objects against the schemas of package-lock.json, as an API server
// would before storing them (check_k8s.py runs it; see install.sh for the packages):
//   1. ajv, through kubernetes-models' validate(): required fields, types, enums, formats and
//      patterns of the Kubernetes OpenAPI schema, or of the Prometheus Operator's CRD schema;
//   2. TypeScript's type checker, the kind's interface (generated from the same schemas) walked
//      alongside the object: a field the schema does not have is an error, as with kubectl's
//      --validate=strict (the OpenAPI schemas do not forbid unknown fields themselves).
// An object of a kind no package knows is an error too, not a silent pass.
//
//   node validate.mjs OBJECTS.json     [{"where": "...", "object": {...}}, ...]
// Run from a directory whose node_modules holds the packages. Prints one line per problem
// and a summary; exit 0 when every object is valid, 1 otherwise.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";

const here = dirname(new URL(import.meta.url).pathname);
const items = JSON.parse(readFileSync(process.argv[2], "utf8"));
const problems = [];

// The module holding a kind's model, or null when no package carries its group.
function modulePath(apiVersion, kind) {
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  if (group === "monitoring.coreos.com") return `@kubernetes-models/prometheus-operator/${apiVersion}/${kind}`;
  const kubernetesGroup = group === "" || !group.includes(".") || group.endsWith(".k8s.io");
  if (kubernetesGroup) return `kubernetes-models/${apiVersion}/${kind}`;
  return null;
}

function label(item) {
  const o = item.object;
  return `${item.where}: ${o.kind}/${o.metadata?.name ?? "?"}`;
}

// 1. ajv.
const typed = [];  // items with a model, for the TypeScript pass
for (const item of items) {
  const { apiVersion, kind } = item.object;
  const path = typeof apiVersion === "string" && typeof kind === "string" ? modulePath(apiVersion, kind) : null;
  let model = null;
  if (path) {
    try {
      model = (await import(path))[kind] ?? null;
    } catch {
      model = null;
    }
  }
  if (!model) {
    problems.push(`${label(item)}: no schema for apiVersion ${apiVersion} kind ${kind}`);
    continue;
  }
  try {
    new model(item.object).validate();
  } catch (e) {
    problems.push(`${label(item)}: ${e.message}`);
  }
  typed.push({ item, path });
}

// 2. Unknown fields: each object's JSON walked alongside its TypeScript interface (declared,
// not assigned, so that one error cannot hide another); a key the type has no property for is
// an unknown field. Maps (labels, ConfigMap data) are index signatures: any key.
const lines = typed.map(({ item, path }, i) =>
  `import type { I${item.object.kind} as T${i} } from ${JSON.stringify(path)};\nexport declare const o${i}: T${i};`);
const file = join(here, "objects.ts");
writeFileSync(file, lines.join("\n") + "\n");
const program = ts.createProgram([file], {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
});
for (const d of ts.getPreEmitDiagnostics(program)) {
  problems.push(`typescript: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
}
const checker = program.getTypeChecker();
const declarations = new Map();
for (const statement of program.getSourceFile(file).statements) {
  if (ts.isVariableStatement(statement)) {
    for (const d of statement.declarationList.declarations) declarations.set(d.name.getText(), d);
  }
}
typed.forEach(({ item }, i) => {
  const decl = declarations.get(`o${i}`);
  const unknown = [];
  unknownFields(item.object, checker.getTypeAtLocation(decl), [], decl, unknown);
  for (const path of unknown) problems.push(`${label(item)}: unknown field ${path}`);
});

function unknownFields(value, type, path, node, out) {
  if (value === null || typeof value !== "object") return;
  type = checker.getNonNullableType(type);
  const members = type.isUnion() ? type.types : [type];
  if (Array.isArray(value)) {
    const element = members.filter((t) => checker.isArrayType(t)).map((t) => checker.getTypeArguments(t)[0])[0];
    if (element) value.forEach((v, i) => unknownFields(v, element, [...path, i], node, out));
    return;
  }
  const objects = members.filter((t) => t.flags & ts.TypeFlags.Object && !checker.isArrayType(t));
  if (objects.length === 0) return;  // not an object in the schema: ajv reports the type
  for (const [key, v] of Object.entries(value)) {
    const prop = objects.map((t) => t.getProperty(key)).find(Boolean);
    if (prop) {
      unknownFields(v, checker.getTypeOfSymbolAtLocation(prop, node), [...path, key], node, out);
      continue;
    }
    const index = objects.flatMap((t) => checker.getIndexInfosOfType(t))[0];
    if (index) unknownFields(v, index.type, [...path, key], node, out);
    else out.push([...path, key].join("."));
  }
}

for (const p of problems) console.log("FAIL: " + p);
console.log(`schemas (kubernetes-models ${version("kubernetes-models")}, ` +
            `@kubernetes-models/prometheus-operator ${version("@kubernetes-models/prometheus-operator")}, ` +
            `typescript ${ts.version}): ${items.length} objects, ` +
            (problems.length ? `${problems.length} problem(s)` : "OK"));
process.exit(problems.length ? 1 : 0);

function version(pkg) {
  return JSON.parse(readFileSync(join(here, "node_modules", pkg, "package.json"), "utf8")).version;
}
