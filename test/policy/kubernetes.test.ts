import { describe, expect, it } from "vitest";
import {
  CARRIERS,
  carrier,
  copy,
  first,
  SERVICE,
  safeK8sContainer,
  safePodSpec,
  safeService,
  sc,
} from "./fixtures";
import { remediateThenValidate, validate, violated } from "./harness";

type Obj = Record<string, unknown>;

/** Container-level breaks: [what, change to one container, exact violated ids]. */
const CONTAINER_CASES: [string, (c: Obj) => void, string[]][] = [
  [
    "privileged",
    (c) => (sc(c).privileged = true),
    ["sandbox-disallow-privilege-escalation", "sandbox-disallow-privileged"],
  ],
  [
    "privileged as a string",
    (c) => (sc(c).privileged = "true"),
    ["sandbox-disallow-privilege-escalation", "sandbox-disallow-privileged"],
  ],
  [
    "allowPrivilegeEscalation true",
    (c) => (sc(c).allowPrivilegeEscalation = true),
    ["sandbox-disallow-privilege-escalation"],
  ],
  [
    "allowPrivilegeEscalation unset",
    (c) => delete sc(c).allowPrivilegeEscalation,
    ["sandbox-disallow-privilege-escalation"],
  ],
  [
    "adds SYS_ADMIN",
    (c) => (sc(c).capabilities = { drop: ["ALL"], add: ["SYS_ADMIN"] }),
    ["sandbox-disallow-added-capabilities", "sandbox-disallow-privilege-escalation"],
  ],
  [
    "adds NET_ADMIN",
    (c) => (sc(c).capabilities = { drop: ["ALL"], add: ["NET_ADMIN"] }),
    ["sandbox-disallow-added-capabilities", "sandbox-require-drop-net-admin"],
  ],
  [
    "drops nothing",
    (c) => delete sc(c).capabilities,
    ["sandbox-require-drop-all", "sandbox-require-drop-net-admin"],
  ],
  [
    "drop: null",
    (c) => (sc(c).capabilities = { drop: null }),
    ["sandbox-require-drop-all", "sandbox-require-drop-net-admin"],
  ],
  [
    "drop: []",
    (c) => (sc(c).capabilities = { drop: [] }),
    ["sandbox-require-drop-all", "sandbox-require-drop-net-admin"],
  ],
  [
    "drops NET_RAW only",
    (c) => (sc(c).capabilities = { drop: ["NET_RAW"] }),
    ["sandbox-require-drop-all", "sandbox-require-drop-net-admin"],
  ],
  [
    "seccomp Unconfined",
    (c) => (sc(c).seccompProfile = { type: "Unconfined" }),
    ["sandbox-disallow-unconfined-seccomp"],
  ],
  [
    "AppArmor Unconfined",
    (c) => (sc(c).appArmorProfile = { type: "Unconfined" }),
    ["sandbox-disallow-unconfined-lsm"],
  ],
  ["SELinux spc_t", (c) => (sc(c).seLinuxOptions = { type: "spc_t" }), ["sandbox-disallow-unconfined-lsm"]],
  ["SELinux container_t", (c) => (sc(c).seLinuxOptions = { type: "container_t", level: "s0:c1,c2" }), []],
  ["procMount Unmasked", (c) => (sc(c).procMount = "Unmasked"), ["sandbox-disallow-unmasked-proc"]],
  [
    "runAsUser 0",
    (c) => Object.assign(sc(c), { runAsUser: 0, runAsNonRoot: undefined }),
    ["sandbox-require-non-root"],
  ],
  [
    'runAsUser "0"',
    (c) => Object.assign(sc(c), { runAsUser: "0", runAsNonRoot: undefined }),
    ["sandbox-require-non-root"],
  ],
  ["runAsGroup 0", (c) => (sc(c).runAsGroup = 0), ["sandbox-require-non-root"]],
  ["runAsNonRoot false with pod runAsUser", (c) => (sc(c).runAsNonRoot = false), []],
  ["writable root", (c) => (sc(c).readOnlyRootFilesystem = false), ["sandbox-require-readonly-rootfs"]],
  ['readOnlyRootFilesystem "true"', (c) => (sc(c).readOnlyRootFilesystem = "true"), []],
  [
    "no securityContext (pod context still applies)",
    (c) => delete c.securityContext,
    [
      "sandbox-disallow-privilege-escalation",
      "sandbox-require-drop-all",
      "sandbox-require-drop-net-admin",
      "sandbox-require-readonly-rootfs",
    ],
  ],
  ["no limits", (c) => (c.resources = { requests: { cpu: "1" } }), ["sandbox-require-resource-limits"]],
  [
    "memory limit only",
    (c) => (c.resources = { limits: { memory: "1Gi" } }),
    ["sandbox-require-resource-limits"],
  ],
  ["numeric cpu limit", (c) => (c.resources = { limits: { cpu: 1, memory: "128974848" } }), []],
  [
    "hostPort",
    (c) => (c.ports = [{ containerPort: 80, hostPort: 8080 }]),
    ["sandbox-disallow-exposed-ports"],
  ],
  [
    "hostPort as a string",
    (c) => (c.ports = [{ containerPort: "80", hostPort: "8080" }]),
    ["sandbox-disallow-exposed-ports"],
  ],
  ["containerPort only", (c) => (c.ports = [{ containerPort: 80 }]), []],
  ["hostPort 0", (c) => (c.ports = [{ containerPort: 80, hostPort: 0 }]), []],
  [
    "secretKeyRef",
    (c) => (c.env = [{ name: "DB", valueFrom: { secretKeyRef: { name: "db", key: "url" } } }]),
    ["sandbox-disallow-secret-env"],
  ],
  [
    "envFrom secretRef",
    (c) => (c.envFrom = [{ secretRef: { name: "all" } }]),
    ["sandbox-disallow-secret-env"],
  ],
  ["envFrom configMapRef", (c) => (c.envFrom = [{ configMapRef: { name: "cfg" } }]), []],
  [
    "a GPU limit",
    (c) => (c.resources = { limits: { cpu: "1", memory: "1Gi", "nvidia.com/gpu": 1 } }),
    ["sandbox-disallow-devices"],
  ],
  [
    "a raw block device",
    (c) => (c.volumeDevices = [{ name: "blk", devicePath: "/dev/xvda" }]),
    ["sandbox-disallow-devices"],
  ],
];

/** Where the broken container sits. */
const LISTS: [string, (spec: Obj) => Obj][] = [
  ["containers", (spec) => first(spec)],
  [
    "initContainers",
    (spec) => {
      const c = safeK8sContainer("init");
      spec.initContainers = [c];
      return c;
    },
  ],
  [
    "ephemeralContainers",
    (spec) => {
      const c = safeK8sContainer("debug");
      delete c.resources; // the API gives ephemeral containers no resources
      spec.ephemeralContainers = [c];
      return c;
    },
  ],
];

/** Breaks an ephemeral container cannot express (ports, resources) are skipped for that list. */
function applies(list: string, what: string): boolean {
  if (list !== "ephemeralContainers") return true;
  return !/port|limit|GPU/i.test(what);
}

describe.each(CARRIERS.map((c) => [c.type, c] as const))("%s", (_type, car) => {
  describe.each(LISTS)("%s", (list, pick) => {
    it.each(CONTAINER_CASES.filter(([what]) => applies(list, what)))("%s", (_what, change, expected) => {
      const spec = copy(safePodSpec());
      change(pick(spec));
      expect(violated(validate(car.type, car.build(spec)))).toEqual(expected);
    });
  });
});

/** Pod-level breaks. */
const POD_CASES: [string, (spec: Obj) => void, string[]][] = [
  [
    "hostNetwork",
    (s) => (s.hostNetwork = true),
    ["sandbox-disallow-exposed-ports", "sandbox-disallow-host-namespaces"],
  ],
  ["hostPID", (s) => (s.hostPID = true), ["sandbox-disallow-host-namespaces"]],
  ['hostIPC "true"', (s) => (s.hostIPC = "true"), ["sandbox-disallow-host-namespaces"]],
  ["hostIPC null", (s) => (s.hostIPC = null), []],
  [
    "pod seccomp Unconfined (containers set none)",
    (s) => {
      (s.securityContext as Obj).seccompProfile = { type: "Unconfined" };
      delete sc(first(s)).seccompProfile;
    },
    ["sandbox-disallow-unconfined-seccomp"],
  ],
  [
    "pod seccomp Unconfined overridden by the container",
    (s) => ((s.securityContext as Obj).seccompProfile = { type: "Unconfined" }),
    [],
  ],
  ["pod runAsUser 0 overridden by the container", (s) => ((s.securityContext as Obj).runAsUser = 0), []],
  [
    "pod runAsUser 0 inherited",
    (s) => {
      (s.securityContext as Obj).runAsUser = 0;
      (s.securityContext as Obj).runAsNonRoot = undefined;
      delete sc(first(s)).runAsUser;
      delete sc(first(s)).runAsNonRoot;
    },
    ["sandbox-require-non-root"],
  ],
  [
    "no user anywhere",
    (s) => {
      s.securityContext = { seccompProfile: { type: "RuntimeDefault" } };
      delete sc(first(s)).runAsUser;
      delete sc(first(s)).runAsNonRoot;
      delete sc(first(s)).runAsGroup;
    },
    ["sandbox-require-non-root"],
  ],
  [
    "pod runAsNonRoot only",
    (s) => {
      s.securityContext = { runAsNonRoot: true };
      delete sc(first(s)).runAsUser;
      delete sc(first(s)).runAsNonRoot;
    },
    [],
  ],
  ["fsGroup 0", (s) => ((s.securityContext as Obj).fsGroup = 0), ["sandbox-require-non-root"]],
  [
    "supplementalGroups [0]",
    (s) => ((s.securityContext as Obj).supplementalGroups = [0]),
    ["sandbox-require-non-root"],
  ],
  [
    "sysctls",
    (s) => ((s.securityContext as Obj).sysctls = [{ name: "kernel.shm_rmid_forced", value: "1" }]),
    ["sandbox-disallow-sysctls"],
  ],
  [
    "token automount",
    (s) => delete s.automountServiceAccountToken,
    ["sandbox-disallow-service-account-token"],
  ],
  [
    "projected token",
    (s) => {
      (s.volumes as Obj[]).push({
        name: "tok",
        projected: { sources: [{ serviceAccountToken: { path: "token" } }] },
      });
      (first(s).volumeMounts as Obj[]).push({ name: "tok", mountPath: "/var/run/secrets/tokens" });
    },
    ["sandbox-disallow-service-account-token"],
  ],
  ["container seccomp unset inherits the pod RuntimeDefault", (s) => delete sc(first(s)).seccompProfile, []],
  [
    "pod-level limits stand in for container limits",
    (s) => {
      delete first(s).resources;
      s.resources = { limits: { cpu: "1", memory: "1Gi" } };
    },
    [],
  ],
  [
    "the Docker socket as hostPath",
    (s) => {
      (s.volumes as Obj[]).push({ name: "sock", hostPath: { path: "/var/run/docker.sock", type: "Socket" } });
      (first(s).volumeMounts as Obj[]).push({
        name: "sock",
        mountPath: "/var/run/docker.sock",
        readOnly: true,
      });
    },
    ["sandbox-disallow-runtime-socket"],
  ],
  [
    "an unmounted socket volume",
    (s) => {
      (s.volumes as Obj[]).push({ name: "sock", hostPath: { path: "/run/containerd/containerd.sock" } });
    },
    ["sandbox-disallow-runtime-socket"],
  ],
  [
    "/var/run mounted whole through subPath",
    (s) => {
      (s.volumes as Obj[]).push({ name: "run", hostPath: { path: "/var" } });
      (first(s).volumeMounts as Obj[]).push({
        name: "run",
        mountPath: "/host",
        subPath: "run/docker.sock",
        readOnly: true,
      });
    },
    ["sandbox-disallow-runtime-socket"],
  ],
  [
    "/proc hostPath",
    (s) => {
      (s.volumes as Obj[]).push({ name: "proc", hostPath: { path: "/proc" } });
      (first(s).volumeMounts as Obj[]).push({ name: "proc", mountPath: "/host/proc", readOnly: true });
    },
    ["sandbox-disallow-sensitive-host-mounts"],
  ],
  [
    "/dev/kvm hostPath",
    (s) => {
      (s.volumes as Obj[]).push({ name: "kvm", hostPath: { path: "/dev/kvm", type: "CharDevice" } });
      (first(s).volumeMounts as Obj[]).push({ name: "kvm", mountPath: "/dev/kvm", readOnly: true });
    },
    ["sandbox-disallow-devices", "sandbox-disallow-sensitive-host-mounts"],
  ],
  [
    "two writable hostPaths",
    (s) => {
      (s.volumes as Obj[]).push(
        { name: "a", hostPath: { path: "/srv/a" } },
        { name: "b", hostPath: { path: "/srv/b" } },
      );
      (first(s).volumeMounts as Obj[]).push({ name: "a", mountPath: "/a" }, { name: "b", mountPath: "/b" });
    },
    ["sandbox-require-single-job-mount"],
  ],
  [
    "Bidirectional propagation",
    (s) => {
      (s.volumes as Obj[]).push({ name: "a", hostPath: { path: "/srv/a" } });
      (first(s).volumeMounts as Obj[]).push({
        name: "a",
        mountPath: "/a",
        mountPropagation: "Bidirectional",
      });
    },
    ["sandbox-require-single-job-mount"],
  ],
  ["runtimeClassName is not required by default", (s) => (s.runtimeClassName = "runc"), []],
];

describe("pod-level fields, on a Deployment, a Job and a bare Pod", () => {
  for (const kind of ["Deployment", "Job", "Pod"]) {
    const car = carrier(kind);
    it.each(POD_CASES)(`${kind}: %s`, (_what, change, expected) => {
      const spec = copy(safePodSpec());
      change(spec);
      expect(violated(validate(car.type, car.build(spec)))).toEqual(expected);
    });
  }

  it("old seccomp and AppArmor annotations count", () => {
    const car = carrier("Deployment");
    const spec = copy(safePodSpec());
    delete (spec.securityContext as Obj).seccompProfile;
    delete sc(first(spec)).seccompProfile;
    const meta = {
      annotations: {
        "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
        "container.apparmor.security.beta.kubernetes.io/task": "unconfined",
      },
    };
    expect(validate(car.type, car.build(spec, meta)).violations).toEqual([
      {
        policy: "sandbox-disallow-unconfined-seccomp",
        message:
          'container "task" runs with seccomp disabled (annotation seccomp.security.alpha.kubernetes.io/pod) [spec.template.spec.containers[0]]',
      },
      {
        policy: "sandbox-disallow-unconfined-lsm",
        message:
          'container "task" runs with AppArmor disabled (annotation container.apparmor.security.beta.kubernetes.io/task) [spec.template.spec.containers[0]]',
      },
    ]);
  });

  it("a container annotation overrides the pod annotation", () => {
    const car = carrier("Pod");
    const spec = copy(safePodSpec());
    delete (spec.securityContext as Obj).seccompProfile;
    delete sc(first(spec)).seccompProfile;
    const meta = {
      annotations: {
        "seccomp.security.alpha.kubernetes.io/pod": "runtime/default",
        "container.seccomp.security.alpha.kubernetes.io/task": "unconfined",
      },
    };
    expect(violated(validate(car.type, car.build(spec, meta)))).toEqual([
      "sandbox-disallow-unconfined-seccomp",
    ]);
  });
});

describe("restart and Job lifecycle", () => {
  it("a bare Pod without restartPolicy restarts always", () => {
    const spec = copy(safePodSpec());
    delete spec.restartPolicy;
    expect(violated(validate("kubernetes:core/v1:Pod", carrier("Pod").build(spec)))).toEqual([
      "sandbox-require-no-restart",
    ]);
  });

  it("a Deployment's restart policy is not judged (it is not a choice)", () => {
    const spec = copy(safePodSpec());
    spec.restartPolicy = "Always";
    expect(violated(validate("kubernetes:apps/v1:Deployment", carrier("Deployment").build(spec)))).toEqual(
      [],
    );
  });

  it("a Job with OnFailure, no backoffLimit, no deadline and no TTL", () => {
    const spec = copy(safePodSpec());
    spec.restartPolicy = "OnFailure";
    const props = carrier("Job").build(spec);
    const jobSpec = props.spec as Obj;
    delete jobSpec.backoffLimit;
    delete jobSpec.activeDeadlineSeconds;
    jobSpec.ttlSecondsAfterFinished = null;
    const o = validate("kubernetes:batch/v1:Job", props);
    expect(o.violations.map((v) => `${v.policy}: ${v.message}`)).toEqual([
      "sandbox-require-no-restart: the workload restarts its containers (restartPolicy on-failure); a task runs once [spec.template.spec.restartPolicy]",
      "sandbox-require-job-lifecycle: backoffLimit is not set, so a failed task is retried 6 times [spec.backoffLimit]",
      "sandbox-require-job-lifecycle: activeDeadlineSeconds is not set, so the job has no deadline [spec.activeDeadlineSeconds]",
      "sandbox-require-job-lifecycle: ttlSecondsAfterFinished is not set, so finished jobs are never cleaned up [spec.ttlSecondsAfterFinished]",
    ]);
  });

  it("a CronJob's backoffLimit as a string above the maximum", () => {
    const props = carrier("CronJob").build(copy(safePodSpec()));
    ((props.spec as Obj).jobTemplate as { spec: Obj }).spec.backoffLimit = "3";
    expect(validate("kubernetes:batch/v1:CronJob", props).violations.map((v) => v.message)).toEqual([
      "backoffLimit is 3, above the maximum 0 [spec.jobTemplate.spec.backoffLimit]",
    ]);
  });
});

describe("Services and Ingresses", () => {
  const cases: [string, (s: Obj) => void, string[]][] = [
    [
      "NodePort",
      (s) => ((s.spec as Obj).type = "NodePort"),
      ['Service "fixture" has type NodePort, which opens a port outside the cluster [spec.type]'],
    ],
    [
      "LoadBalancer",
      (s) => ((s.spec as Obj).type = "LoadBalancer"),
      ['Service "fixture" has type LoadBalancer, which opens a port outside the cluster [spec.type]'],
    ],
    [
      "externalIPs",
      (s) => ((s.spec as Obj).externalIPs = ["203.0.113.7"]),
      ['Service "fixture" sets externalIPs [203.0.113.7] [spec.externalIPs]'],
    ],
    ["ExternalName", (s) => ((s.spec as Obj).type = "ExternalName"), []],
  ];
  it.each(cases)("%s", (_what, change, messages) => {
    const s = copy(safeService());
    change(s);
    expect(validate(SERVICE, s).violations.map((v) => v.message)).toEqual(messages);
  });

  it.each([
    "kubernetes:networking.k8s.io/v1:Ingress",
    "kubernetes:extensions/v1beta1:Ingress",
    "kubernetes:networking.k8s.io/v1beta1:Ingress",
  ])("any %s", (type) => {
    const o = validate(type, { spec: { rules: [{ host: "task.example.com" }] } });
    expect(o.violations).toEqual([
      {
        policy: "sandbox-disallow-exposed-ports",
        message: 'Ingress "fixture" lets traffic in from outside the cluster (task.example.com)',
      },
    ]);
  });
});

describe("Kubernetes remediation", () => {
  it("drops NET_ADMIN, blocks escalation and sets read-only root on every container list", () => {
    const level = { enforcementLevel: "remediate" };
    const config = {
      "sandbox-require-drop-net-admin": level,
      "sandbox-disallow-privilege-escalation": level,
      "sandbox-require-readonly-rootfs": level,
    };
    const spec = copy(safePodSpec());
    const init = safeK8sContainer("init");
    init.securityContext = { runAsNonRoot: true, capabilities: { add: ["NET_ADMIN"] } };
    spec.initContainers = [init];
    const { props, outcome } = remediateThenValidate("kubernetes:batch/v1:Job", carrier("Job").build(spec), {
      config,
      selection: { only: Object.keys(config) },
    });
    expect(violated(outcome)).toEqual([]);
    const fixed = (
      (props as { spec: { template: { spec: Obj } } }).spec.template.spec.initContainers as Obj[]
    )[0] as Obj;
    expect(fixed.securityContext).toEqual({
      runAsNonRoot: true,
      capabilities: { add: [], drop: ["NET_ADMIN"] },
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
    });
  });
});
