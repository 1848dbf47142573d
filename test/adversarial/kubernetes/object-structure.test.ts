/**
 * Class 6: Kubernetes input structure and host paths.
 * - kubectl reads a JSON file with YAMLOrJSONDecoder, whose JSON branch is a json.Decoder over the stream: objects
 *   written one after another (`{...}{...}`, or one per line) are each applied (k8s.io/apimachinery
 *   util/yaml.YAMLOrJSONDecoder, NewJSONDecoder...Decode in a loop by cli-runtime's StreamVisitor).
 * - A List whose items hold another List is flattened by kubectl (cli-runtime FlattenListVisitor recurses).
 * - libvirtd's socket (/run/libvirt/libvirt-sock, /run/libvirt/virtqemud-sock) starts VMs with host devices and
 *   files: a runtime socket like containerd's; a read-only bind does not stop connect(2) on a socket.
 */
import { pod, SAFE_CONTAINER_SECURITY } from "../fixtures";
import { blocked, cases } from "../harness";

const privPod = (name: string) =>
  pod(name, { securityContext: `${SAFE_CONTAINER_SECURITY}\nprivileged: true` });
const podJson = (name: string, privileged: boolean): string =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      automountServiceAccountToken: false,
      restartPolicy: "Never",
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: "main",
          image: "busybox:1.36",
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
            ...(privileged ? { privileged: true } : {}),
          },
          resources: { limits: { cpu: "500m", memory: "128Mi" } },
        },
      ],
    },
  });

cases("class 6: streams and lists", [
  {
    name: "a .json file holding two concatenated objects (a JSON stream), the second privileged",
    files: { "pods.json": `${podJson("a", false)}${podJson("b", true)}\n` },
    plain: {
      "pods.json": `${JSON.stringify({ apiVersion: "v1", kind: "List", items: [JSON.parse(podJson("a", false)), JSON.parse(podJson("b", true))] })}\n`,
    },
    want: blocked("sandbox-disallow-privileged", "b"),
  },
  {
    name: "a .json file with one object per line (newline-delimited), the second privileged",
    files: { "pods.json": `${podJson("a", false)}\n${podJson("b", true)}\n` },
    plain: { "pods.json": `${podJson("b", true)}\n` },
    want: blocked("sandbox-disallow-privileged", "b"),
  },
  {
    // kubectl refuses the outer List (cli-runtime FlattenListVisitor: ExtractList of an unstructured item fails, "not
    // a list"; the kube-stream oracle shows it), so scan reports the refusal (exit 2) and still judges the items.
    name: "a List inside a List",
    files: {
      "list.json": `${JSON.stringify({ apiVersion: "v1", kind: "List", items: [{ apiVersion: "v1", kind: "List", items: [JSON.parse(podJson("b", true))] }] })}\n`,
    },
    plain: { "pod.yaml": privPod("b") },
    want: { ...blocked("sandbox-disallow-privileged", "b"), engineRefuses: true },
  },
]);

const socketPod = (path: string, readOnly: boolean) =>
  pod("p", {
    container: `volumeMounts:\n  - name: s\n    mountPath: /s${readOnly ? "\n    readOnly: true" : ""}`,
    spec: `volumes:\n  - name: s\n    hostPath:\n      path: ${path}\n      type: Socket`,
  });

cases("class 6: runtime sockets the lists may miss", [
  {
    name: "libvirt's socket /run/libvirt/libvirt-sock, read-only",
    files: { "pod.yaml": socketPod("/run/libvirt/libvirt-sock", true) },
    plain: { "pod.yaml": socketPod("/run/containerd/containerd.sock", true) },
    want: blocked("sandbox-disallow-runtime-socket", "p"),
  },
  {
    name: "libvirt's modular daemon socket /var/run/libvirt/virtqemud-sock, read-only",
    files: { "pod.yaml": socketPod("/var/run/libvirt/virtqemud-sock", true) },
    plain: { "pod.yaml": socketPod("/run/containerd/containerd.sock", true) },
    want: blocked("sandbox-disallow-runtime-socket", "p"),
  },
  {
    name: "docker.sock reached through /var with subPath run/docker.sock",
    files: {
      "pod.yaml": pod("p", {
        container:
          "volumeMounts:\n  - name: s\n    mountPath: /s\n    subPath: run/docker.sock\n    readOnly: true",
        spec: "volumes:\n  - name: s\n    hostPath:\n      path: /var\n      type: Directory",
      }),
    },
    plain: { "pod.yaml": socketPod("/var/run/docker.sock", true) },
    want: blocked("sandbox-disallow-runtime-socket", "p"),
  },
]);
