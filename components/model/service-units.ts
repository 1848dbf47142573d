/**
 * On Docker the proxy and the broker run as one container per template (a unit), each serving that template's
 * listener alone. A task's own network holds only its template's units, so no port a task may pick reaches another
 * template's allowlist, broker route or credential: a unit has none of them. (Kubernetes keeps one proxy and one
 * broker, where each template's pods reach only their own port by NetworkPolicy.)
 */
import { createHash } from "node:crypto";
import type { BrokerSpec } from "./broker-spec";
import { haproxyConfig } from "./haproxy";
import { projectLabels } from "./labels";
import { serviceUnitName } from "./names";
import type { ProxySpec } from "./proxy-spec";
import { squidConfig } from "./squid";

function hashOf(config: string): string {
  return createHash("sha256").update(config).digest("hex").slice(0, 16);
}

/** Template `template`'s own proxy: only its listener and allowlist, or undefined when it does not use the proxy. */
export function proxyUnit(proxy: ProxySpec, template: string): ProxySpec | undefined {
  const listener = proxy.listeners.find((l) => l.template === template);
  if (listener === undefined) return undefined;
  const config = squidConfig([listener]);
  const configHash = hashOf(config);
  return {
    ...proxy,
    name: serviceUnitName(proxy.name, template),
    listeners: [listener],
    config,
    configHash,
    labels: projectLabels(proxy.project, "proxy", template, configHash),
  };
}

/** Every template's own proxy, by template name. */
export function proxyUnits(proxy: ProxySpec): ProxySpec[] {
  return proxy.listeners.flatMap((l) => proxyUnit(proxy, l.template) ?? []);
}

/**
 * Template `template`'s own broker: only its listener, the routes it names and their credentials, or undefined when
 * it calls no route.
 */
export function brokerUnit(broker: BrokerSpec, template: string): BrokerSpec | undefined {
  const listener = broker.listeners.find((l) => l.template === template);
  if (listener === undefined) return undefined;
  const routes = Object.fromEntries(
    Object.entries(broker.routes).filter(([route]) => listener.routes.includes(route)),
  );
  const config = haproxyConfig([listener], routes);
  const configHash = hashOf(config);
  return {
    ...broker,
    name: serviceUnitName(broker.name, template),
    listeners: [listener],
    routes,
    config,
    configHash,
    credentials: broker.credentials.filter((c) => listener.routes.includes(c.route)),
    labels: projectLabels(broker.project, "broker", template, configHash),
  };
}

/** Every template's own broker, by template name. */
export function brokerUnits(broker: BrokerSpec): BrokerSpec[] {
  return broker.listeners.flatMap((l) => brokerUnit(broker, l.template) ?? []);
}
