/**
 * Which workload is the secrets broker, the one container a credential may reach. A label says nothing on its own
 * (any container can carry `sandbox.role=broker`): the broker is a workload so labelled that runs exactly one
 * container of the broker's image with the image's own entry point (no command, entry point or arguments of its
 * own, no exec probe, lifecycle hook, healthcheck or upload, nothing mounted but its own runtime, configuration and
 * credentials folders, no variable but the broker's), and of its environment only the variables the broker's configuration reads credentials from
 * (`SANDBOX_BROKER_CRED_<ROUTE>`) may hold one; on Kubernetes, a Secret volume mounted read-only where the image reads
 * its credentials (`/run/secrets/sandbox-broker`).
 */
import {
  BROKER_CONFIG_DIR,
  BROKER_CONFIG_ENV,
  BROKER_IMAGE,
  BROKER_RUN_DIR,
  BROKER_SECRETS_DIR,
} from "../../components/model";
import type { ContainerView, EnvView, MountView, WorkloadView } from "../workload";

/** The broker's credential variables. */
export const BROKER_CREDENTIAL_NAME = /^SANDBOX_BROKER_CRED_[A-Z0-9_]+$/;

/** True when `w` is the broker as its image runs it (see the module's comment); `images` are the accepted images. */
export function isGenuineBroker(w: WorkloadView, images: readonly string[] = [BROKER_IMAGE]): boolean {
  if (w.role !== "broker" || w.containers.length !== 1) return false;
  const c = w.containers[0] as ContainerView;
  return (
    c.role === "container" &&
    typeof c.image === "string" &&
    images.includes(c.image) &&
    c.args.length === 0 &&
    // Nothing else runs in it or is put into it (an exec probe or healthcheck would run with its credentials)...
    c.execHooks !== undefined &&
    c.execHooks.length === 0 &&
    // ...nothing is mounted over its programs, and its environment is the broker's own.
    !c.mountsUnknown &&
    c.mounts.every(brokerMount) &&
    !c.envUnknown &&
    c.env.every((e) => typeof e.name === "string" && e.name.startsWith("SANDBOX_BROKER_"))
  );
}

/** The broker's own mounts: memory for its runtime files and /tmp, its configuration, its credentials. */
function brokerMount(m: MountView): boolean {
  const memory = m.type === "tmpfs" || m.type === "emptyDir";
  if (m.target === BROKER_RUN_DIR || m.target === "/tmp") return memory;
  if (m.target === BROKER_CONFIG_DIR) return m.type === "configMap";
  if (m.target === BROKER_SECRETS_DIR) return m.type === "secret";
  return false;
}

/**
 * True when `e` is one of the genuine broker's own variables, which may hold a secret: a credential variable, or its
 * configuration (a stack's env list holding one secret is secret as a whole, the configuration's entry with it).
 */
export function isBrokerCredential(
  w: WorkloadView,
  e: EnvView,
  images: readonly string[] = [BROKER_IMAGE],
): boolean {
  return (
    isGenuineBroker(w, images) &&
    typeof e.name === "string" &&
    (BROKER_CREDENTIAL_NAME.test(e.name) || e.name === BROKER_CONFIG_ENV) &&
    e.from !== "secretRef"
  );
}

/** The genuine broker's generated configuration, as its environment holds it (Docker), or undefined. */
export function brokerConfigOf(w: WorkloadView): string | undefined {
  const e = w.containers[0]?.env.find((x) => x.name === BROKER_CONFIG_ENV);
  return typeof e?.value === "string" ? e.value : undefined;
}

/** True when `m` is the genuine broker's read-only credentials volume (Kubernetes). */
export function isBrokerSecretMount(
  w: WorkloadView,
  m: MountView,
  images: readonly string[] = [BROKER_IMAGE],
): boolean {
  return (
    isGenuineBroker(w, images) &&
    m.type === "secret" &&
    m.target === BROKER_SECRETS_DIR &&
    m.readOnly === true
  );
}
