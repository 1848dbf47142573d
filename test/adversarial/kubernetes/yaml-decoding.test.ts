/**
 * Class 2: Kubernetes YAML the way kubectl and the API server read it, in the spellings the first acceptance set left out.
 *
 * - kubectl reads a file through cli-runtime's FileVisitor, which wraps it in `unicode.BOMOverride`: a UTF-8 or
 *   UTF-16 byte-order mark is honoured, and YAMLReader splits the stream at `---` lines before sigs.k8s.io/yaml reads
 *   each document, so a BOM at the start of a later document is that document's own (the kube-yaml oracle turns
 *   "\uFEFFapiVersion: v1\nkind: Pod" into {"apiVersion":"v1","kind":"Pod"}).
 * - go-yaml v2 decodes a `!!binary` key to its text: `!!binary cHJpdmlsZWdlZA==: true` is {"privileged": true}
 *   (oracle).
 * - go-yaml v2's isMerge only takes a plain `<<` scalar; an alias whose anchor is `<<` is the key "<<", which the API
 *   server drops as an unknown field (oracle: `*m : {privileged: true}` gives {"<<": {"privileged": true}}), so it
 *   must not be read as privileged.
 * - CRLF line ends are YAML line breaks (oracle: identical JSON).
 * - containerd's CRI upper-cases added capabilities and adds the CAP_ prefix, and takes "ALL" in any case
 *   (containerd pkg/cri opts `getCapabilities`-style normalisation), so `add: ["all"]` and `add: ["sys_admin"]` are
 *   every capability and CAP_SYS_ADMIN.
 */

import { describe, it } from "vitest";
import { bytesVerdict, utf16le } from "../bytes";
import { pod, SAFE_CONTAINER_SECURITY } from "../fixtures";
import { blocked, cases } from "../harness";

const privPod = (name: string) =>
  pod(name, { securityContext: `${SAFE_CONTAINER_SECURITY}\nprivileged: true` });
const P = (object: string) => blocked("sandbox-disallow-privileged", object);

cases("class 2: byte-level spellings", [
  {
    name: "a BOM at the start of the second document of a stream",
    files: { "pods.yaml": `${pod("a")}---\n\uFEFF${privPod("b")}` },
    plain: { "pods.yaml": `${pod("a")}---\n${privPod("b")}` },
    want: P("b"),
  },
  {
    name: "CRLF line ends throughout",
    files: { "pod.yaml": privPod("p").replace(/\n/g, "\r\n") },
    plain: { "pod.yaml": privPod("p") },
    want: P("p"),
  },
]);

cases("class 2: keys written with tags and aliases", [
  {
    name: "privileged key written as !!binary base64",
    files: {
      "pod.yaml": pod("p", {
        securityContext: `${SAFE_CONTAINER_SECURITY}\n!!binary ${Buffer.from("privileged").toString("base64")}: true`,
      }),
    },
    plain: { "pod.yaml": privPod("p") },
    want: P("p"),
  },
  {
    name: "hostNetwork key as an explicit ? key with a !!str tag",
    files: { "pod.yaml": pod("p", { spec: "? !!str hostNetwork\n: true" }) },
    plain: { "pod.yaml": pod("p", { spec: "hostNetwork: true" }) },
    want: blocked(undefined, "p"),
  },
  {
    name: "an alias of an anchored << used as a key is the plain key '<<' (no merge): not privileged, and refused as a key outside SecurityContext",
    files: {
      "pod.yaml": pod("p", {
        top: "x-m: &m <<",
        securityContext: `${SAFE_CONTAINER_SECURITY}\n*m : {privileged: true}`,
      }).replace("metadata:", "metadata:"),
    },
    want: blocked("sandbox-disallow-unjudged-fields", "p"),
  },
]);

cases("class 2: capability names as the runtime normalises them", [
  {
    name: 'capabilities.add: ["all"] (lower case)',
    files: {
      "pod.yaml": pod("p", {
        securityContext:
          "allowPrivilegeEscalation: false\nreadOnlyRootFilesystem: true\ncapabilities:\n  drop: [ALL]\n  add: [all]",
      }),
    },
    plain: {
      "pod.yaml": pod("p", {
        securityContext:
          "allowPrivilegeEscalation: false\nreadOnlyRootFilesystem: true\ncapabilities:\n  drop: [ALL]\n  add: [ALL]",
      }),
    },
    want: blocked("sandbox-disallow-added-capabilities", "p"),
  },
  {
    name: 'capabilities.add: ["sys_admin"] (lower case, no CAP_)',
    files: {
      "pod.yaml": pod("p", {
        securityContext:
          "allowPrivilegeEscalation: false\nreadOnlyRootFilesystem: true\ncapabilities:\n  drop: [ALL]\n  add: [sys_admin]",
      }),
    },
    plain: {
      "pod.yaml": pod("p", {
        securityContext:
          "allowPrivilegeEscalation: false\nreadOnlyRootFilesystem: true\ncapabilities:\n  drop: [ALL]\n  add: [SYS_ADMIN]",
      }),
    },
    want: blocked("sandbox-disallow-added-capabilities", "p"),
  },
  {
    name: "a sidecar (initContainers, restartPolicy: Always) that is privileged",
    files: {
      "pod.yaml": pod("p", {
        spec: `initContainers:\n  - name: side\n    image: busybox:1.36\n    restartPolicy: Always\n    securityContext:\n      privileged: true\n      allowPrivilegeEscalation: true\n    resources:\n      limits: {cpu: 100m, memory: 64Mi}`,
      }),
    },
    plain: { "pod.yaml": privPod("p") },
    want: P("p"),
  },
]);

describe("class 2: a UTF-16 manifest", () => {
  // kubectl applies it (FileVisitor's BOMOverride); scan refuses it as binary (exit 2): fail closed, but not the
  // verdict the UTF-8 twin gets.
  it("UTF-16LE with a BOM, privileged [plain spelling]", async () => {
    await bytesVerdict({ "pod.yaml": privPod("p") }, P("p"));
  });
  it("UTF-16LE with a BOM, privileged", async () => {
    await bytesVerdict({ "pod.yaml": utf16le(privPod("p")) }, P("p"));
  });
});
