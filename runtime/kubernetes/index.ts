/**
 * The Kubernetes runtime as a library (`@sandbox-projects/toolkit/runtime/kubernetes`): the launcher that runs a
 * project's tasks as Jobs on the cluster its stack deployed to, the clients it is given, and the off switch. An entry
 * of its own because its types are the Kubernetes client's: a Docker-only user of `/runtime` never needs them.
 */
export { type KubeApis, type KubeTarget, kubeApis } from "./api";
export { KubeLauncher, type KubeLauncherOptions } from "./launcher";
export { type KubeOffReport, kubeOffSwitch } from "./off";
