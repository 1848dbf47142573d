/**
 * The pieces every exposure reader of an operator object shares: a service type an operator writes (its default
 * when absent), a Service spec it embeds, and a switch or object that makes the operator open a way in (an Ingress,
 * a Route, a tunnel). Each yields the views `sandbox-disallow-exposed-ports` judges, with the field's path.
 */
import {
  type IngressView,
  isUnknown,
  isUnreadable,
  type ServiceView,
  UNKNOWN,
  type Val,
} from "../../workload";
import { at, bool, field, isObj, join, str, strList, unreadable } from "../lenient";

/** The Kubernetes service types that keep a Service inside the cluster. */
export const CLUSTER_TYPES: readonly string[] = ["ClusterIP"];

/** One object being read: its type token, name and Kind, and the views found so far. */
export class ExposureReader {
  readonly out: (ServiceView | IngressView)[] = [];
  constructor(
    readonly type: string,
    readonly kind: string,
    readonly name: string,
    readonly props: unknown,
  ) {}

  private origin() {
    return { backend: "kubernetes" as const, type: this.type, kind: this.kind, name: this.name };
  }

  /**
   * A service type the operator copies into a Service it creates (`def` when absent): every value but `closed` is
   * refused, a placeholder or a value of the wrong shape too.
   */
  serviceType(path: string, def: string, closed: readonly string[] = CLUSTER_TYPES): void {
    const raw = at(this.props, path);
    let t: Val<string> = raw === undefined || raw === null || raw === "" ? def : str(raw);
    if (typeof raw === "boolean" || typeof raw === "number") t = unreadable(raw, "a service type");
    this.out.push({
      subject: "service",
      origin: this.origin(),
      serviceType: t,
      externalIPs: undefined,
      nodePorts: [],
      typePath: path,
      closedTypes: closed,
    });
  }

  /** A Service spec the operator applies to a Service it creates (`type` defaults to ClusterIP). */
  serviceSpec(path: string): void {
    const spec = at(this.props, path);
    if (spec !== undefined && !isUnknown(spec) && !isObj(spec)) {
      this.entry(`${path} cannot be read`, path, unreadable(spec, "a Service spec"));
      return;
    }
    this.serviceType(join(path, "type"), "ClusterIP");
    const ips = strList(field(spec, "externalIPs"));
    if (ips !== undefined)
      this.out.push({
        subject: "service",
        origin: this.origin(),
        serviceType: "ClusterIP",
        externalIPs: ips,
        nodePorts: [],
        externalIPsPath: join(path, "externalIPs"),
      });
  }

  /** A way in the operator opens (an Ingress, a Route, a tunnel): `what` says which, for the message. */
  entry(what: string, path?: string, cause?: Val<unknown>): void {
    const why = isUnreadable(cause)
      ? ` (${cause.reason})`
      : cause === UNKNOWN
        ? " (not known until the update)"
        : "";
    this.out.push({
      subject: "ingress",
      origin: this.origin(),
      hosts: [what + why],
      ...(path === undefined ? {} : { path }),
    });
  }

  /**
   * A boolean switch that makes the operator open a way in: true opens it, absent or false does not (`def` when
   * absent), and a value that cannot be read counts as open.
   */
  flag(path: string, what: string, def = false): void {
    const v = bool(at(this.props, path));
    if (v === true || (v === undefined && def)) this.entry(`${path}: ${what}`, path);
    else if (v === UNKNOWN) this.unknown(path);
    else if (isUnknown(v)) this.entry(`${path} cannot be read, counted as ${what}`, path, v);
  }

  /** A setting not known until the update: a note, as a core Service's unknown type is. */
  unknown(path: string): void {
    this.out.push({
      subject: "service",
      origin: this.origin(),
      serviceType: UNKNOWN,
      externalIPs: undefined,
      nodePorts: [],
      typePath: path,
    });
  }

  /** An object whose presence makes the operator open a way in. */
  present(path: string, what: string): void {
    const v = at(this.props, path);
    if (v !== undefined && v !== null && v !== false) this.entry(`${path}: ${what}`, path);
  }
}
