/**
 * Class 9: Kubernetes baselines. Without a seccomp profile the kubelet runs a container Unconfined (unless the node
 * opts in with SeccompDefault, which the manifest cannot promise), so an absent profile is a violation; the Pod
 * Security "restricted" profile allows adding NET_BIND_SERVICE and nothing else.
 */
import { compose, pod } from "./fixtures";
import { blocked, cases, passes } from "./harness";

const noSeccomp = "runAsNonRoot: true\nrunAsUser: 1000\nrunAsGroup: 1000";

cases("class 9: Kubernetes baselines", [
  {
    name: "a Pod with no seccompProfile anywhere",
    files: { "pod.yaml": pod("p", { podSecurity: noSeccomp }) },
    plain: { "pod.yaml": pod("p", { podSecurity: `${noSeccomp}\nseccompProfile: {type: Unconfined}` }) },
    want: blocked("sandbox-disallow-unconfined-seccomp", "p"),
  },
  {
    name: "a Pod whose only container sets RuntimeDefault passes",
    files: {
      "pod.yaml": pod("p", {
        podSecurity: noSeccomp,
        containerSecurity: "seccompProfile: {type: RuntimeDefault}",
      }),
    },
    want: passes,
  },
  {
    name: "adding only NET_BIND_SERVICE (drop ALL) passes",
    files: {
      "pod.yaml": pod("p", {
        securityContext:
          "allowPrivilegeEscalation: false\nreadOnlyRootFilesystem: true\ncapabilities:\n  drop: [ALL]\n  add: [NET_BIND_SERVICE]",
      }),
    },
    want: passes,
  },
  {
    name: "adding NET_BIND_SERVICE and NET_RAW is blocked",
    files: {
      "pod.yaml": pod("p", {
        securityContext:
          "allowPrivilegeEscalation: false\ncapabilities:\n  drop: [ALL]\n  add: [NET_BIND_SERVICE, NET_RAW]",
      }),
    },
    plain: {
      "pod.yaml": pod("p", {
        securityContext: "allowPrivilegeEscalation: false\ncapabilities:\n  drop: [ALL]\n  add: [NET_RAW]",
      }),
    },
    want: blocked("sandbox-disallow-added-capabilities", "p"),
  },
  {
    name: "Compose cap_add: [NET_BIND_SERVICE] with cap_drop: [ALL] passes (policy assumed the same as on Kubernetes)",
    files: { "compose.yaml": compose("app", "cap_add: [NET_BIND_SERVICE]") },
    want: passes,
  },
]);
