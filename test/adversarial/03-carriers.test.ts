/**
 * Class 3: pod specs wherever they live. Each custom resource below is written in its project's documented shape
 * (Argo Workflows templates[].container/script, Argo Rollouts spec.template, Tekton steps and stepTemplate, KubeVirt
 * domain host disks, Knative serving spec.template, OpenShift DeploymentConfig, Kubeflow *ReplicaSpecs, Ray head and
 * worker groups, Spark driver/executor, KEDA ScaledJob jobTargetRef, OpenKruise CloneSet/Advanced StatefulSet,
 * Volcano tasks), each creating a pod with a privileged container or a host-path socket. Exposure kinds are judged by
 * group. A PersistentVolume with hostPath mounts that host path into every pod that claims it.
 */
import { pod } from "./fixtures";
import { blocked, cases } from "./harness";

const PRIV = `- name: main
  image: busybox:1.36
  securityContext:
    privileged: true`;

function ind(text: string, by: number): string {
  return text
    .split("\n")
    .map((l) => " ".repeat(by) + l)
    .join("\n");
}

/** The same privileged container in a plain Pod named like the custom resource. */
const plainPod = (name: string) => ({
  "pod.yaml": pod(name, {
    securityContext: "allowPrivilegeEscalation: false\ncapabilities: {drop: [ALL]}\nprivileged: true",
  }),
});
const want = (name: string) => blocked("sandbox-disallow-privileged", name);

function cr(apiVersion: string, kind: string, name: string, spec: string): string {
  return `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${ind(spec, 2)}\n`;
}

const podTemplate = (extra = "") =>
  `template:\n  spec:\n${extra === "" ? "" : `${ind(extra, 4)}\n`}    containers:\n${ind(PRIV, 6)}`;

cases("class 3: pod specs in custom resources", [
  {
    name: "Argo Workflow templates[].container",
    files: {
      "wf.yaml": cr(
        "argoproj.io/v1alpha1",
        "Workflow",
        "wf",
        `entrypoint: main\ntemplates:\n  - name: main\n    container:\n      image: busybox:1.36\n      securityContext:\n        privileged: true`,
      ),
    },
    plain: plainPod("wf"),
    want: want("wf"),
  },
  {
    name: "Argo WorkflowTemplate templates[].script",
    files: {
      "wft.yaml": cr(
        "argoproj.io/v1alpha1",
        "WorkflowTemplate",
        "wft",
        `templates:\n  - name: s\n    script:\n      image: busybox:1.36\n      source: echo hi\n      securityContext:\n        privileged: true`,
      ),
    },
    plain: plainPod("wft"),
    want: want("wft"),
  },
  {
    name: "Argo CronWorkflow spec.workflowSpec.templates[].container",
    files: {
      "cwf.yaml": cr(
        "argoproj.io/v1alpha1",
        "CronWorkflow",
        "cwf",
        `schedule: "* * * * *"\nworkflowSpec:\n  templates:\n    - name: main\n      container:\n        image: busybox:1.36\n        securityContext:\n          privileged: true`,
      ),
    },
    plain: plainPod("cwf"),
    want: want("cwf"),
  },
  {
    name: "Argo Rollout spec.template",
    files: {
      "ro.yaml": cr(
        "argoproj.io/v1alpha1",
        "Rollout",
        "ro",
        `replicas: 1\nselector: {matchLabels: {app: ro}}\nstrategy: {canary: {steps: [{setWeight: 20}]}}\n${podTemplate()}`,
      ),
    },
    plain: plainPod("ro"),
    want: want("ro"),
  },
  {
    name: "Tekton Task steps[]",
    files: {
      "task.yaml": cr(
        "tekton.dev/v1",
        "Task",
        "tk",
        `steps:\n  - name: s\n    image: busybox:1.36\n    securityContext:\n      privileged: true`,
      ),
    },
    plain: plainPod("tk"),
    want: want("tk"),
  },
  {
    name: "Tekton Task stepTemplate applies to every step",
    files: {
      "task.yaml": cr(
        "tekton.dev/v1",
        "Task",
        "tk2",
        `stepTemplate:\n  securityContext:\n    privileged: true\nsteps:\n  - name: s\n    image: busybox:1.36`,
      ),
    },
    plain: plainPod("tk2"),
    want: want("tk2"),
  },
  {
    name: "Tekton TaskRun with an embedded taskSpec",
    files: {
      "tr.yaml": cr(
        "tekton.dev/v1",
        "TaskRun",
        "tr",
        `taskSpec:\n  steps:\n    - name: s\n      image: busybox:1.36\n      securityContext:\n        privileged: true`,
      ),
    },
    plain: plainPod("tr"),
    want: want("tr"),
  },
  {
    name: "Tekton Pipeline with an inline taskSpec",
    files: {
      "pl.yaml": cr(
        "tekton.dev/v1",
        "Pipeline",
        "pl",
        `tasks:\n  - name: t\n    taskSpec:\n      steps:\n        - name: s\n          image: busybox:1.36\n          securityContext:\n            privileged: true`,
      ),
    },
    plain: plainPod("pl"),
    want: want("pl"),
  },
  {
    name: "KubeVirt VirtualMachine hostDisk under /var/run (a host path the VM's pod mounts)",
    files: {
      "vm.yaml": cr(
        "kubevirt.io/v1",
        "VirtualMachine",
        "vm",
        `running: true\ntemplate:\n  spec:\n    domain:\n      devices:\n        disks: [{name: d, disk: {bus: virtio}}]\n    volumes:\n      - name: d\n        hostDisk:\n          path: /var/run/docker.sock\n          type: Disk`,
      ),
    },
    plain: {
      "pod.yaml": pod("vm", {
        container: "volumeMounts: [{name: s, mountPath: /s}]",
        spec: "volumes: [{name: s, hostPath: {path: /var/run/docker.sock}}]",
      }),
    },
    want: blocked(undefined, "vm"),
  },
  {
    name: "Knative serving.knative.dev Service spec.template",
    files: {
      "ksvc.yaml": cr(
        "serving.knative.dev/v1",
        "Service",
        "ksvc",
        `template:\n  spec:\n    containers:\n${ind(PRIV, 6)}`,
      ),
    },
    plain: plainPod("ksvc"),
    want: want("ksvc"),
  },
  {
    name: "OpenShift DeploymentConfig spec.template",
    files: {
      "dc.yaml": cr(
        "apps.openshift.io/v1",
        "DeploymentConfig",
        "dc",
        `replicas: 1\nselector: {app: dc}\n${podTemplate()}`,
      ),
    },
    plain: plainPod("dc"),
    want: want("dc"),
  },
  {
    name: "Kubeflow PyTorchJob pytorchReplicaSpecs.Worker.template",
    files: {
      "pt.yaml": cr(
        "kubeflow.org/v1",
        "PyTorchJob",
        "pt",
        `pytorchReplicaSpecs:\n  Master:\n    replicas: 1\n    template:\n      spec:\n        containers:\n          - name: pytorch\n            image: busybox:1.36\n  Worker:\n    replicas: 2\n    template:\n      spec:\n        containers:\n${ind(PRIV, 10)}`,
      ),
    },
    plain: plainPod("pt"),
    want: want("pt"),
  },
  {
    name: "Kubeflow TFJob tfReplicaSpecs.PS.template",
    files: {
      "tf.yaml": cr(
        "kubeflow.org/v1",
        "TFJob",
        "tf",
        `tfReplicaSpecs:\n  PS:\n    replicas: 1\n    template:\n      spec:\n        containers:\n${ind(PRIV, 10)}`,
      ),
    },
    plain: plainPod("tf"),
    want: want("tf"),
  },
  {
    name: "RayCluster workerGroupSpecs[].template",
    files: {
      "ray.yaml": cr(
        "ray.io/v1",
        "RayCluster",
        "ray",
        `headGroupSpec:\n  rayStartParams: {}\n  template:\n    spec:\n      containers: [{name: head, image: rayproject/ray:2.9.0}]\nworkerGroupSpecs:\n  - groupName: w\n    replicas: 1\n    rayStartParams: {}\n    template:\n      spec:\n        containers:\n${ind(PRIV, 10)}`,
      ),
    },
    plain: plainPod("ray"),
    want: want("ray"),
  },
  {
    name: "RayJob spec.rayClusterSpec.headGroupSpec.template",
    files: {
      "rj.yaml": cr(
        "ray.io/v1",
        "RayJob",
        "rj",
        `entrypoint: python x.py\nrayClusterSpec:\n  headGroupSpec:\n    rayStartParams: {}\n    template:\n      spec:\n        containers:\n${ind(PRIV, 10)}`,
      ),
    },
    plain: plainPod("rj"),
    want: want("rj"),
  },
  {
    name: "SparkApplication executor securityContext privileged",
    files: {
      "spark.yaml": cr(
        "sparkoperator.k8s.io/v1beta2",
        "SparkApplication",
        "sp",
        `type: Scala\nmode: cluster\nimage: spark:3.5.0\nmainClass: org.apache.spark.examples.SparkPi\nmainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar\nsparkVersion: 3.5.0\ndriver:\n  cores: 1\n  memory: 512m\nexecutor:\n  instances: 1\n  cores: 1\n  memory: 512m\n  securityContext:\n    privileged: true`,
      ),
    },
    plain: plainPod("sp"),
    want: want("sp"),
  },
  {
    name: "KEDA ScaledJob jobTargetRef.template",
    files: {
      "sj.yaml": cr(
        "keda.sh/v1alpha1",
        "ScaledJob",
        "sj",
        `jobTargetRef:\n  ${podTemplate("restartPolicy: Never").replace(/\n/g, "\n  ")}\ntriggers:\n  - type: cron\n    metadata: {timezone: UTC, start: "0 * * * *", end: "1 * * * *", desiredReplicas: "1"}`,
      ),
    },
    plain: plainPod("sj"),
    want: want("sj"),
  },
  {
    name: "OpenKruise CloneSet spec.template",
    files: {
      "cs.yaml": cr(
        "apps.kruise.io/v1alpha1",
        "CloneSet",
        "cs",
        `replicas: 1\nselector: {matchLabels: {app: cs}}\n${podTemplate()}`,
      ),
    },
    plain: plainPod("cs"),
    want: want("cs"),
  },
  {
    name: "OpenKruise Advanced StatefulSet (apps.kruise.io/v1beta1)",
    files: {
      "ass.yaml": cr(
        "apps.kruise.io/v1beta1",
        "StatefulSet",
        "ass",
        `replicas: 1\nserviceName: ass\nselector: {matchLabels: {app: ass}}\n${podTemplate()}`,
      ),
    },
    plain: plainPod("ass"),
    want: want("ass"),
  },
  {
    name: "OpenKruise BroadcastJob spec.template",
    files: {
      "bj.yaml": cr("apps.kruise.io/v1alpha1", "BroadcastJob", "bj", podTemplate("restartPolicy: Never")),
    },
    plain: plainPod("bj"),
    want: want("bj"),
  },
  {
    name: "Volcano Job tasks[].template",
    files: {
      "vc.yaml": cr(
        "batch.volcano.sh/v1alpha1",
        "Job",
        "vc",
        `schedulerName: volcano\nminAvailable: 1\ntasks:\n  - name: t\n    replicas: 1\n    ${podTemplate("restartPolicy: Never").replace(/\n/g, "\n    ")}`,
      ),
    },
    plain: plainPod("vc"),
    want: want("vc"),
  },
  {
    name: "an unknown CRD (example.com Widget) with spec.template.spec.containers",
    files: { "w.yaml": cr("example.com/v1", "Widget", "widget", podTemplate()) },
    plain: plainPod("widget"),
    want: want("widget"),
  },
  {
    name: "an unknown CRD with a jobTemplate.spec.template (CronJob-shaped)",
    files: {
      "w.yaml": cr(
        "example.com/v1",
        "Scheduled",
        "sched",
        `jobTemplate:\n  spec:\n    ${podTemplate("restartPolicy: Never").replace(/\n/g, "\n    ")}`,
      ),
    },
    plain: plainPod("sched"),
    want: want("sched"),
  },
]);

const sockPod = (claim: string) =>
  pod("consumer", {
    container: "volumeMounts: [{name: data, mountPath: /data}]",
    spec: `volumes: [{name: data, persistentVolumeClaim: {claimName: ${claim}}}]`,
  });

cases("class 3: a hostPath PersistentVolume mounted through its claim", [
  {
    name: "PV hostPath /var/run bound by claimRef, Pod mounts the PVC",
    files: {
      "pv.yaml":
        "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: hostpv\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  hostPath: {path: /var/run}\n  claimRef: {namespace: default, name: data}\n",
      "pvc.yaml":
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n  volumeName: hostpv\n",
      "pod.yaml": sockPod("data"),
    },
    plain: {
      "pod.yaml": pod("consumer", {
        container: "volumeMounts: [{name: s, mountPath: /data}]",
        spec: "volumes: [{name: s, hostPath: {path: /var/run}}]",
      }),
    },
    want: blocked(undefined, "consumer"),
  },
  {
    name: "PV local.path /etc with a storageClass, claimed by storageClassName",
    files: {
      "pv.yaml":
        "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: localpv\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: host\n  local: {path: /etc}\n  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: Exists}]}]}}\n",
      "pvc.yaml":
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: cfg\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: host\n  resources: {requests: {storage: 1Gi}}\n",
      "pod.yaml": sockPod("cfg"),
    },
    plain: {
      "pod.yaml": pod("consumer", {
        container: "volumeMounts: [{name: s, mountPath: /data}]",
        spec: "volumes: [{name: s, hostPath: {path: /etc}}]",
      }),
    },
    want: blocked(undefined, "consumer"),
  },
]);

const plainIngress = (name: string) => ({
  "ing.yaml": `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: ${name}\nspec:\n  rules:\n    - http:\n        paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]\n`,
});
const exposed = (name: string) => blocked("sandbox-disallow-exposed-ports", name);

cases("class 3: exposure kinds by group", [
  {
    name: "Istio networking.istio.io Gateway",
    files: {
      "gw.yaml": cr(
        "networking.istio.io/v1",
        "Gateway",
        "igw",
        "selector: {istio: ingressgateway}\nservers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: ['*']",
      ),
    },
    plain: plainIngress("igw"),
    want: exposed("igw"),
  },
  {
    name: "Istio VirtualService bound to a gateway",
    files: {
      "vs.yaml": cr(
        "networking.istio.io/v1beta1",
        "VirtualService",
        "ivs",
        "hosts: ['*']\ngateways: [igw]\nhttp:\n  - route: [{destination: {host: web}}]",
      ),
    },
    plain: plainIngress("ivs"),
    want: exposed("ivs"),
  },
  {
    name: "Contour projectcontour.io HTTPProxy",
    files: {
      "hp.yaml": cr(
        "projectcontour.io/v1",
        "HTTPProxy",
        "hp",
        "virtualhost: {fqdn: web.example.com}\nroutes:\n  - services: [{name: web, port: 80}]",
      ),
    },
    plain: plainIngress("hp"),
    want: exposed("hp"),
  },
  {
    name: "Traefik traefik.io IngressRoute",
    files: {
      "ir.yaml": cr(
        "traefik.io/v1alpha1",
        "IngressRoute",
        "ir",
        "entryPoints: [web]\nroutes:\n  - match: PathPrefix(`/`)\n    kind: Rule\n    services: [{name: web, port: 80}]",
      ),
    },
    plain: plainIngress("ir"),
    want: exposed("ir"),
  },
  {
    name: "Traefik legacy traefik.containo.us IngressRouteTCP",
    files: {
      "irt.yaml": cr(
        "traefik.containo.us/v1alpha1",
        "IngressRouteTCP",
        "irt",
        "entryPoints: [tcp]\nroutes:\n  - match: HostSNI(`*`)\n    services: [{name: web, port: 5432}]",
      ),
    },
    plain: plainIngress("irt"),
    want: exposed("irt"),
  },
  {
    name: "OpenShift route.openshift.io Route",
    files: {
      "route.yaml": cr(
        "route.openshift.io/v1",
        "Route",
        "rt",
        "to: {kind: Service, name: web}\nport: {targetPort: 8080}",
      ),
    },
    plain: plainIngress("rt"),
    want: exposed("rt"),
  },
  {
    name: "Knative serving DomainMapping",
    files: {
      "dm.yaml": cr(
        "serving.knative.dev/v1beta1",
        "DomainMapping",
        "web.example.com",
        "ref: {name: web, kind: Service, apiVersion: serving.knative.dev/v1}",
      ),
    },
    plain: plainIngress("web.example.com"),
    want: exposed("web.example.com"),
  },
]);
