# The benchmark's peer: the sandbox walls in Rego for OPA, over the same Kubernetes pod carriers the TypeScript rules
# judge. Equivalent for the generated workloads (bench/workloads.ts); it is a benchmark peer, not a second pack.
# Each violation is {"id": <workload name>, "rule": <the TypeScript rule id it mirrors>}.
# Input: {"items": [manifest, ...]} (opa eval -i), or manifests as data documents under data.manifests (opa eval -d).
package sandbox

workloads := input.items if input.items

workloads := data.manifests if not input.items

pod_spec(m) := m.spec if m.kind == "Pod"

pod_spec(m) := m.spec.template.spec if m.kind in {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

pod_spec(m) := m.spec.jobTemplate.spec.template.spec if m.kind == "CronJob"

containers(spec) := array.concat(object.get(spec, "initContainers", []), object.get(spec, "containers", []))

caps(c, key) := {upper(trim_prefix(upper(x), "CAP_")) | some x in object.get(c, ["securityContext", "capabilities", key], [])}

pod_sc(spec) := object.get(spec, "securityContext", {})

# The mounted hostPath volumes of a container.
host_mounts(spec, c) := [v.hostPath.path |
	some m in object.get(c, "volumeMounts", [])
	some v in object.get(spec, "volumes", [])
	v.name == m.name
	v.hostPath.path
]

sockets := {"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock", "/var/run/containerd/containerd.sock", "/run/crio/crio.sock", "/var/run/crio/crio.sock"}

sensitive := {"/", "/etc", "/proc", "/sys", "/root", "/boot", "/dev", "/usr", "/lib", "/bin", "/sbin", "/var/log", "/var/lib/kubelet", "/var/lib/docker"}

secret_name := `(?i)(secret|token|passw(or)?d|api_?key|private_?key|credential)`

item(rule) := {"rule": rule}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-exposed-ports"} if {
	some m in workloads
	spec := pod_spec(m)
	spec.hostNetwork == true
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-exposed-ports"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	some p in object.get(c, "ports", [])
	object.get(p, "hostPort", 0) > 0
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-runtime-socket"} if {
	some m in workloads
	spec := pod_spec(m)
	some c in containers(spec)
	some path in host_mounts(spec, c)
	path in sockets
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-secret-env"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	some e in object.get(c, "env", [])
	e.valueFrom.secretKeyRef
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-secret-env"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	some e in object.get(c, "env", [])
	regex.match(secret_name, e.name)
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-drop-net-admin"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	drop := caps(c, "drop")
	not "ALL" in drop
	not "NET_ADMIN" in drop
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-drop-net-admin"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	count(caps(c, "add") & {"ALL", "NET_ADMIN"}) > 0
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-privileged"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	c.securityContext.privileged == true
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-host-namespaces"} if {
	some m in workloads
	spec := pod_spec(m)
	some k in ["hostNetwork", "hostPID", "hostIPC"]
	spec[k] == true
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-added-capabilities"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	count(caps(c, "add")) > 0
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-drop-all"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	not "ALL" in caps(c, "drop")
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-privilege-escalation"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	object.get(c, ["securityContext", "allowPrivilegeEscalation"], true) != false
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-privilege-escalation"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	c.securityContext.privileged == true
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-unconfined-seccomp"} if {
	some m in workloads
	spec := pod_spec(m)
	some c in containers(spec)
	profile := object.get(c, ["securityContext", "seccompProfile", "type"], object.get(pod_sc(spec), ["seccompProfile", "type"], ""))
	profile == "Unconfined"
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-unmasked-proc"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	c.securityContext.procMount == "Unmasked"
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-non-root"} if {
	some m in workloads
	spec := pod_spec(m)
	some c in containers(spec)
	object.get(c, ["securityContext", "runAsUser"], object.get(pod_sc(spec), "runAsUser", -1)) == 0
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-non-root"} if {
	some m in workloads
	spec := pod_spec(m)
	some c in containers(spec)
	object.get(c, ["securityContext", "runAsUser"], object.get(pod_sc(spec), "runAsUser", -1)) == -1
	object.get(c, ["securityContext", "runAsNonRoot"], object.get(pod_sc(spec), "runAsNonRoot", false)) != true
}

# A uid with no gid runs with the gid of the image's passwd entry (0 when there is none): the rule refuses it.
violation contains {"id": m.metadata.name, "rule": "sandbox-require-non-root"} if {
	some m in workloads
	spec := pod_spec(m)
	some c in containers(spec)
	uid := object.get(c, ["securityContext", "runAsUser"], object.get(pod_sc(spec), "runAsUser", -1))
	uid > 0
	object.get(c, ["securityContext", "runAsGroup"], object.get(pod_sc(spec), "runAsGroup", -1)) == -1
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-non-root"} if {
	some m in workloads
	spec := pod_spec(m)
	some c in containers(spec)
	object.get(c, ["securityContext", "runAsGroup"], object.get(pod_sc(spec), "runAsGroup", -1)) == 0
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-readonly-rootfs"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	object.get(c, ["securityContext", "readOnlyRootFilesystem"], false) != true
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-resource-limits"} if {
	some m in workloads
	some c in containers(pod_spec(m))
	some r in ["cpu", "memory"]
	not c.resources.limits[r]
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-no-restart"} if {
	some m in workloads
	m.kind in {"Pod", "Job", "CronJob"}
	object.get(pod_spec(m), "restartPolicy", "Always") != "Never"
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-sysctls"} if {
	some m in workloads
	count(object.get(pod_sc(pod_spec(m)), "sysctls", [])) > 0
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-service-account-token"} if {
	some m in workloads
	object.get(pod_spec(m), "automountServiceAccountToken", true) != false
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-sensitive-host-mounts"} if {
	some m in workloads
	spec := pod_spec(m)
	some c in containers(spec)
	some path in host_mounts(spec, c)
	some s in sensitive
	path == s
}

violation contains {"id": m.metadata.name, "rule": "sandbox-disallow-sensitive-host-mounts"} if {
	some m in workloads
	spec := pod_spec(m)
	some c in containers(spec)
	some path in host_mounts(spec, c)
	some s in sensitive
	s != "/"
	startswith(path, concat("", [s, "/"]))
}

# More than one writable host mount in the workload (no job roots are configured in the benchmark).
violation contains {"id": m.metadata.name, "rule": "sandbox-require-single-job-mount"} if {
	some m in workloads
	spec := pod_spec(m)
	writable := {v.hostPath.path |
		some c in containers(spec)
		some vm in object.get(c, "volumeMounts", [])
		some v in object.get(spec, "volumes", [])
		v.hostPath
		vm.name == v.name
		object.get(vm, "readOnly", false) != true
	}
	count(writable) > 1
}

violation contains {"id": m.metadata.name, "rule": "sandbox-require-job-lifecycle"} if {
	some m in workloads
	m.kind in {"Job", "CronJob"}
	job := object.get(m, ["spec", "jobTemplate", "spec"], m.spec)
	some k in ["backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"]
	not job[k]
}

# The rules above, for the benchmark's count of checks per workload.
rules := {v.rule | some v in violation}
