/**
 * sandbox-require-proxy-only-egress (stack rule): a task in proxy mode (`sandbox.egress=proxy`, or a proxy variable
 * with a value) has no route out but the proxy. Docker: it joins only networks the stack declares `internal` (not
 * host, not the default bridge, which an unset network mode is, not another container's namespace, not an undeclared
 * network). Kubernetes: no host networking, an egress NetworkPolicy of its namespace selects it, and none that
 * selects it opens egress beyond the proxy's pods. A proxy's generated Squid allowlist is neither empty nor everything.
 */
import { describe, expect, it } from "vitest";
import { DECLARED_ARGS, scanJson, tempFiles } from "../../scan/helpers";
import { carrier, DOCKER, first, safeContainer, safePodSpec } from "../fixtures";
import { noted, type StackFixture, UNKNOWN_WIRE, validateStack, violated } from "../harness";

const RULE = "sandbox-require-proxy-only-egress";
type Obj = Record<string, unknown>;
/** The private, link-local and metadata destinations, denied before the first allow (as the generated config does). */
const REFUSED =
  "acl refused_dst dst 0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.168.0.0/16 ::1 fe80::/10 fc00::/7\nhttp_access deny refused_dst\n";
const GOOD_SQUID = `acl allowed dstdomain -n pypi.org .github.com\n${REFUSED}http_access allow allowed\nhttp_access deny all`;
const ROUTE = "has a route out that bypasses the proxy";
const OPEN = "no NetworkPolicy in this stack restricts its egress (everything is allowed)";

const mine = (fixtures: StackFixture[]) =>
  validateStack(fixtures)
    .violations.filter((v) => v.policy === RULE)
    .map((v) => v.message);
const labels = (role: string, egress?: string) => [
  { label: "sandbox.project", value: "demo" },
  { label: "sandbox.role", value: role },
  ...(egress === undefined ? [] : [{ label: "sandbox.egress", value: egress }]),
];
const fx = (type: string, name: string, props: Obj): StackFixture => ({ type, name, props });
const net = (name: string, props: Obj = {}) => fx("docker:index/network:Network", name, { name, ...props });
const INTERNAL = (name: string) => net(name, { internal: true });
const task = (extra: Obj) =>
  fx(DOCKER, "task", { ...safeContainer(), labels: labels("task", "proxy"), ...extra });
const on = (networkMode?: string, second?: string) => ({
  networkMode,
  ...(second === undefined ? {} : { networksAdvanced: [{ name: second }] }),
});
// The proxy runs its image's entry point and mounts nothing but memory (a task's job folder is not the proxy's).
const { command: _command, mounts: _mounts, ...entryPoint } = safeContainer();
/** A Docker proxy as the toolkit runs it: the proxy image with its own entry point. */
const proxy = (config: string) =>
  fx(DOCKER, "egress", {
    ...entryPoint,
    image: "sandbox-proxy:1",
    labels: labels("proxy"),
    envs: [`SANDBOX_PROXY_CONFIG=${config}`],
  });
const TASK = 'proxy-mode task Container "task"';

const POD_LABELS = { "sandbox.project": "demo", "sandbox.role": "task", "sandbox.egress": "proxy" };
function job(spec: Obj = safePodSpec(), podLabels: unknown = POD_LABELS, namespace = "sbx"): StackFixture {
  const props = carrier("Job").build(spec, { labels: podLabels });
  props.metadata = { name: "task", namespace };
  return fx(carrier("Job").type, "task", props);
}
/** A hardened pod spec whose container sets HTTPS_PROXY. */
function proxyVar(): Obj {
  const s = safePodSpec();
  (first(s).env as Obj[]).push({ name: "HTTPS_PROXY", value: "http://egress:3128" });
  return s;
}
const NP = "kubernetes:networking.k8s.io/v1:NetworkPolicy";
const policy = (spec: Obj, namespace = "sbx") =>
  fx(NP, "egress", { metadata: { name: "egress", namespace }, spec });
const TO_PROXY = {
  to: [{ podSelector: { matchLabels: { "sandbox.role": "proxy" } } }],
  ports: [{ port: 3128 }],
};
const MINE = { matchLabels: { "sandbox.egress": "proxy" } };
const restrict = (egress: unknown[], selector: Obj = MINE, namespace = "sbx") =>
  policy({ podSelector: selector, policyTypes: ["Egress"], egress }, namespace);
const JOB = 'proxy-mode task Job "task"';

describe(RULE, () => {
  it("passes the hardened docker.Container and the hardened Pod, Deployment and Job (not in proxy mode)", () => {
    const stack = [fx(DOCKER, "c", { ...safeContainer(), networkMode: "bridge" })];
    for (const kind of ["Pod", "Deployment", "Job"])
      stack.push(fx(carrier(kind).type, kind, carrier(kind).build(safePodSpec())));
    expect(violated(validateStack(stack))).not.toContain(RULE);
  });

  describe("Docker", () => {
    it("passes a proxy-mode task with no network, or only on internal networks the stack declares", () => {
      expect(mine([task({})])).toEqual([]);
      expect(mine([INTERNAL("tasks"), task(on("tasks"))])).toEqual([]);
      expect(mine([INTERNAL("a"), INTERNAL("b"), task(on("a", "b"))])).toEqual([]);
    });

    it.each([
      [
        "a declared network that is not internal",
        [net("tasks")],
        on("tasks"),
        '"tasks" is not internal (a route off',
      ],
      ["internal: false", [net("tasks", { internal: false })], on("tasks"), '"tasks" is not internal'],
      ["the default bridge", [], on("bridge"), `"bridge" ${ROUTE}`],
      ["no network mode (the default bridge)", [], on(undefined), `"bridge" ${ROUTE}`],
      ["default", [], on("default"), `"default" ${ROUTE}`],
      ["the host's network", [], on("host"), `"host" ${ROUTE}`],
      ["another container's network", [], on("container:egress"), `"container:egress" ${ROUTE}`],
      [
        "an undeclared network",
        [],
        on("elsewhere"),
        '"elsewhere" is not declared in this stack, so it cannot be',
      ],
      [
        "a second network not internal",
        [INTERNAL("tasks"), net("out")],
        on("tasks", "out"),
        '"out" is not internal',
      ],
    ])("refuses a proxy-mode task on %s", (_, nets, extra, text) => {
      const m = mine([...nets, task(extra)]);
      expect(m).toHaveLength(1);
      expect(m[0]).toContain(`${TASK}: network ${text}`);
    });

    it("takes a proxy variable with a value as proxy mode, and an empty one as not", () => {
      const bridged = (envs: string[]) =>
        fx(DOCKER, "t", { ...safeContainer(), networkMode: "bridge", envs });
      expect(mine([bridged(["HTTPS_PROXY=http://egress:3128"])])).toEqual([
        `proxy-mode task Container "t": network "bridge" ${ROUTE}`,
      ]);
      expect(mine([bridged(["http_proxy=http://egress:3128"])])).toHaveLength(1);
      expect(mine([bridged(["HTTPS_PROXY="])])).toEqual([]);
    });

    it("notes a network or an internal flag not known until the update", () => {
      const unknownFlag = [net("tasks", { internal: UNKNOWN_WIRE }), task(on("tasks"))];
      for (const stack of [[task({ networkMode: UNKNOWN_WIRE })], unknownFlag]) {
        const o = validateStack(stack);
        expect(violated(o)).not.toContain(RULE);
        expect(noted(o)).toContain(RULE);
      }
    });
  });

  describe("the proxy's allowlist", () => {
    it("passes an explicit allowlist, and a proxy whose configuration is not in its props", () => {
      expect(mine([proxy(GOOD_SQUID)])).toEqual([]);
      expect(
        mine([
          fx(DOCKER, "egress", {
            ...entryPoint,
            image: "sandbox-proxy:1",
            labels: labels("proxy"),
            envs: [],
          }),
        ]),
      ).toEqual([]);
    });

    it.each([
      ["no allowlist", "http_access deny all", "its allowlist is empty"],
      [
        "allow all",
        "acl a dstdomain pypi.org\nhttp_access allow all",
        "it allows every request (`http_access allow all`)",
      ],
      ["*", "acl allowed dstdomain *", 'its allowlist contains "*" (every host)'],
      [".", "acl allowed dstdomain pypi.org .", 'its allowlist contains "." (every host)'],
      ["*.com", "acl allowed dstdomain *.com", 'its allowlist contains "*.com" (every host)'],
    ])("refuses a Docker proxy with %s", (_, config, text) => {
      expect(mine([proxy(config)])).toEqual([`proxy Container "egress": ${text}`]);
    });

    const configMap = (data: Obj, role = "proxy") =>
      fx("kubernetes:core/v1:ConfigMap", "proxy-config", {
        metadata: { labels: { "sandbox.role": role } },
        data,
      });
    it("judges the proxy ConfigMap's squid.conf, and no other ConfigMap or key", () => {
      expect(mine([configMap({ "squid.conf": "acl allowed dstdomain .*" })])).toEqual([
        'proxy ConfigMap "proxy-config": its allowlist contains ".*" (every host)',
      ]);
      expect(mine([configMap({ "squid.conf": GOOD_SQUID })])).toEqual([]);
      expect(mine([configMap({ "squid.conf": "http_access allow all" }, "cache")])).toEqual([]);
      expect(mine([configMap({ "other.conf": "http_access allow all" })])).toEqual([]);
    });

    const ALLOW = `acl a dstdomain -n pypi.org\n${REFUSED}http_access allow a\n`;
    it.each([
      [
        "a continued allow line",
        "acl a dstdomain pypi.org\nhttp_access \\\n allow \\\n all\n",
        "(`http_access allow all`)",
      ],
      [
        "a comment between continued lines",
        "http_access \\\n# note\n  allow all\n",
        "(`http_access allow all`)",
      ],
      [
        "a line cut at its carriage return",
        "acl a dstdomain pypi.org\nhttp_access allow all\r a\n",
        "(`http_access allow all`)",
      ],
      ["an include", `${ALLOW}include /etc/squid/conf.d/*.conf\n`, "includes other files"],
      ["a conditional", `if true\n${ALLOW}endif\n`, "is a conditional"],
      ["a macro", `${ALLOW}acl me myportname \${process_name}\n`, `uses the macro \${process_name}`],
      [
        "values from a file",
        'acl a dstdomain "/etc/hosts.txt"\nhttp_access allow a\n',
        "takes values from a file",
      ],
      [
        "quoted values turned on",
        `configuration_includes_quoted_values on\n${ALLOW}`,
        "changes how every later line",
      ],
      [
        "a line Squid reads in pieces",
        `acl a dstdomain ${"x".repeat(9000)}\n`,
        "which Squid reads as several lines",
      ],
    ])("refuses %s", (_, config, text) => {
      const m = mine([proxy(config)]);
      expect(m).toHaveLength(1);
      expect(m[0]).toContain(text);
    });

    it("reads a configuration as Squid does: a continuation pending at the end is dropped, a trailing comment ends a line", () => {
      expect(mine([proxy(`${ALLOW}http_access allow \\`)])).toEqual([]);
      expect(
        mine([proxy(`acl a dstdomain -n pypi.org # the index\n${REFUSED}http_access allow a # only\n`)]),
      ).toEqual([]);
      expect(mine([proxy("acl a dstdomain pypi.org\nhttp_access allow a#x\n")])).toEqual([
        'proxy Container "egress": it allows requests whatever host they name (`http_access allow a#x`: no host ACL limits it)',
      ]);
    });

    it("notes a configuration not known until the update", () => {
      expect(noted(validateStack([configMap({ "squid.conf": UNKNOWN_WIRE })]))).toContain(RULE);
    });
  });

  describe("Kubernetes", () => {
    it("passes a proxy-mode pod that egress policies limit to the proxy's pods, or deny all egress", () => {
      expect(mine([restrict([TO_PROXY]), job()])).toEqual([]);
      expect(mine([policy({ podSelector: {}, policyTypes: ["Egress"] }), job()])).toEqual([]);
    });

    it.each([
      ["no NetworkPolicy", [], OPEN],
      ["a policy of another namespace", [restrict([TO_PROXY], MINE, "other")], OPEN],
      ["a policy that selects other pods", [restrict([TO_PROXY], { matchLabels: { app: "web" } })], OPEN],
    ])("refuses a proxy-mode pod with %s", (_, policies, text) => {
      expect(mine([...policies, job()])).toEqual([`${JOB}: ${text}`]);
    });

    const ON_POLICY = 'NetworkPolicy "egress": spec.egress';
    it.each([
      ["an egress rule without `to`", [{}], "[0] has no `to` (every destination)"],
      ["an ipBlock", [{ to: [{ ipBlock: { cidr: "0.0.0.0/0" } }] }], '[0] reaches an ipBlock "0.0.0.0/0"'],
      [
        "a namespaceSelector",
        [{ to: [{ namespaceSelector: {} }] }],
        "[0] reaches a namespaceSelector (pods of",
      ],
      [
        "other pods",
        [TO_PROXY, { to: [{ podSelector: {} }] }],
        "[1] reaches a podSelector that is not the proxy's",
      ],
    ])("refuses, on the policy, one that opens egress by %s, with or without the task", (_, egress, text) => {
      for (const stack of [[restrict(egress), job()], [restrict(egress)]]) {
        const m = mine(stack);
        expect(m).toHaveLength(1);
        expect(m[0]).toContain(`${ON_POLICY}${text}`);
      }
    });

    it("refuses host networking even under a good policy", () => {
      expect(mine([restrict([TO_PROXY]), job({ ...safePodSpec(), hostNetwork: true })])).toEqual([
        `${JOB}: hostNetwork bypasses the proxy`,
      ]);
    });

    it("takes a proxy variable in a container as proxy mode, and judges every carrier's pods", () => {
      expect(mine([job(proxyVar(), { app: "x" })])).toEqual([`${JOB}: ${OPEN}`]);
      const t = carrier("PodTemplate");
      expect(mine([fx(t.type, "t", t.build(safePodSpec(), { labels: POD_LABELS }))])).toEqual([
        `proxy-mode task PodTemplate "t": ${OPEN}`,
      ]);
    });

    it("notes a NetworkPolicy with a value not known until the update, anywhere in its spec", () => {
      const later = restrict([{ to: [{ ipBlock: { cidr: UNKNOWN_WIRE } }] }]);
      const o = validateStack([policy({ podSelector: {}, policyTypes: ["Egress"] }), later, job()]);
      expect(violated(o)).not.toContain(RULE);
      expect(noted(o)).toContain(RULE);
    });

    it("notes host networking, or pod labels (which policies select it), not known until the update", () => {
      const unknownHost = [restrict([TO_PROXY]), job({ ...safePodSpec(), hostNetwork: UNKNOWN_WIRE })];
      for (const stack of [unknownHost, [job(proxyVar(), UNKNOWN_WIRE)]]) {
        const o = validateStack(stack);
        expect(violated(o)).not.toContain(RULE);
        expect(noted(o)).toContain(RULE);
      }
    });
  });

  describe("scan of a stack export", () => {
    const resource = (f: StackFixture) => ({
      urn: `urn:pulumi:dev::sandbox::${f.type}::${f.name}`,
      custom: true,
      type: f.type,
      inputs: f.props,
    });
    async function found(fixtures: StackFixture[]) {
      const state = JSON.stringify({ version: 3, deployment: { resources: fixtures.map(resource) } });
      const args = ["state.json", ...DECLARED_ARGS];
      const { code, report } = await scanJson(args, undefined, tempFiles({ "state.json": state }));
      expect(report.errors).toEqual([]);
      return { code, m: report.findings.filter((f) => f.ruleId === RULE).map((f) => f.message) };
    }

    it("refuses a proxy-mode container on the bridge and passes it on a declared internal network", async () => {
      expect(await found([task(on("bridge"))])).toEqual({
        code: 1,
        m: [`${TASK}: network "bridge" ${ROUTE}`],
      });
      expect(await found([INTERNAL("tasks"), task(on("tasks"))])).toEqual({ code: 0, m: [] });
    });

    it("refuses what the pack refuses: an open policy alone, a task wearing the proxy's label, a binaryData squid.conf", async () => {
      const open = policy({ podSelector: {}, policyTypes: ["Egress"], egress: [{}] });
      const spoof = job(safePodSpec(), { ...POD_LABELS, "sandbox.role": "proxy" });
      const binary = fx("kubernetes:core/v1:ConfigMap", "proxy-config", {
        metadata: { name: "p", namespace: "sbx", labels: { "sandbox.role": "proxy" } },
        binaryData: { "squid.conf": Buffer.from("http_access allow all\n").toString("base64") },
      });
      for (const stack of [[open], [restrict([TO_PROXY]), spoof], [binary]]) {
        const pack = mine(stack);
        expect(pack).toHaveLength(1);
        expect(await found(stack)).toEqual({ code: 1, m: pack });
      }
    });

    it("refuses a proxy-mode Job with no egress policy, and a proxy that allows everything", async () => {
      expect((await found([job()])).m).toEqual([`${JOB}: ${OPEN}`]);
      expect((await found([restrict([TO_PROXY]), job()])).m).toEqual([]);
      expect((await found([proxy("acl allowed dstdomain *")])).m).toEqual([
        'proxy Container "egress": its allowlist contains "*" (every host)',
      ]);
    });
  });
});
