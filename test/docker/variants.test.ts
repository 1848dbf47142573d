import { describe, expect, it } from "vitest";
import { SandboxProject } from "../../components/docker/sandboxProject";
import { HARDENED_PROBE_LOGS } from "../helpers/probeLogs";
import { one, outputValue, recordingMocks } from "../helpers/pulumiMocks";

const CONTAINER = "docker:index/container:Container";

const hardenedLogs = HARDENED_PROBE_LOGS;

describe("SandboxProject variants on Docker", () => {
  it("exports the probe's walls report parsed from the container's logs", async () => {
    const mocks = await recordingMocks({
      state: (type, name) =>
        type === CONTAINER && name.endsWith("-probe") ? { containerLogs: hardenedLogs, exitCode: 0 } : {},
    });
    const project = new SandboxProject("p", {
      budget: { monthlyCapUsd: 5 },
      templates: { t: { image: "x:1" } },
    });
    const probes = await outputValue(project.probes);
    expect(probes.t?.passed).toBe(true);
    expect(probes.t?.walls.find((w) => w.wall === "pidsMax")).toEqual({
      wall: "pidsMax",
      declared: "128",
      observed: "128",
      ok: true,
    });
    await mocks.settle();
  });

  it("reports a failed probe when a wall did not hold", async () => {
    const mocks = await recordingMocks({
      state: (type) =>
        type === CONTAINER ? { containerLogs: hardenedLogs.replace("Seccomp=2", "Seccomp=0") } : {},
    });
    const project = new SandboxProject("p", {
      budget: { monthlyCapUsd: 5 },
      templates: { t: { image: "x:1" } },
    });
    const probes = await outputValue(project.probes);
    expect(probes.t?.passed).toBe(false);
    expect(probes.t?.walls.filter((w) => w.ok === false).map((w) => w.wall)).toEqual(["seccomp"]);
    await mocks.settle();
  });

  it("starts nothing when disabled (the hard stop): no probe, zero concurrency, the network stays", async () => {
    const mocks = await recordingMocks();
    const project = new SandboxProject("off", {
      enabled: false,
      budget: { monthlyCapUsd: 0 },
      templates: { t: { image: "x:1" } },
    });
    await outputValue(project.probes);
    const registered = await mocks.settle();
    expect(registered.map((r) => r.type).sort()).toEqual([
      "docker:index/network:Network",
      "sandbox:docker:SandboxProject",
      "sandbox:docker:TaskTemplate",
    ]);
    expect((await outputValue(project.templates)).t?.maxConcurrentTasks).toBe(0);
    expect(await outputValue(project.probes)).toEqual({ t: undefined });
  });

  it("skips the probe when asked", async () => {
    const mocks = await recordingMocks();
    const project = new SandboxProject("np", {
      probe: false,
      budget: { monthlyCapUsd: 5 },
      templates: { t: { image: "x:1" } },
    });
    await outputValue(project.probes);
    expect((await mocks.settle()).filter((r) => r.type === CONTAINER)).toEqual([]);
  });

  it("puts a proxy-mode template on the internal network with the proxy variables, and sets a stronger runtime", async () => {
    const mocks = await recordingMocks();
    const project = new SandboxProject("px", {
      budget: { monthlyCapUsd: 10 },
      network: { subnet: "10.231.0.0/24", proxyPort: 8080 },
      templates: { web: { image: "x:1", runtime: "runsc", egress: { mode: "proxy", allow: ["pypi.org"] } } },
    });
    await outputValue(project.probes);
    const registered = await mocks.settle();
    expect(one(registered, "docker:index/network:Network", "px-net").inputs.ipamConfigs).toEqual([
      { subnet: "10.231.0.0/24" },
    ]);
    // The probe runs on a network of its own that holds only it and its template's proxy, with no host address on it;
    // the template's proxy is on the project network (internal, icc off), an egress network and that probe network.
    const probe = one(registered, CONTAINER, "px-web-probe").inputs;
    expect(probe.networkMode).toBe("px-probe-web-net");
    expect(one(registered, "docker:index/network:Network", "px-web-probe-net").inputs).toMatchObject({
      name: "px-probe-web-net",
      internal: true,
      options: { "com.docker.network.bridge.inhibit_ipv4": "true" },
    });
    expect(one(registered, "docker:index/network:Network", "px-egress").inputs).toMatchObject({
      name: "px-egress",
      internal: false,
    });
    const proxy = one(registered, CONTAINER, "px-proxy-web").inputs;
    expect(proxy).toMatchObject({
      name: "px-proxy-web",
      image: "sandbox-proxy:1",
      user: "13:13",
      networkMode: "px-egress",
      readOnly: true,
      capabilities: { drops: ["ALL"], adds: [] },
      securityOpts: ["no-new-privileges:true"],
    });
    expect(proxy.networksAdvanced).toEqual([
      { name: "px-net", aliases: ["px-proxy-web"] },
      { name: "px-probe-web-net", aliases: ["px-proxy"] },
    ]);
    expect((proxy.envs as string[])[0]).toContain("http_port 8080 name=t_web");
    expect(probe.runtime).toBe("runsc");
    expect(probe.envs).toEqual([
      "HTTPS_PROXY=http://px-proxy:8080",
      "HTTP_PROXY=http://px-proxy:8080",
      "NO_PROXY=",
      "http_proxy=http://px-proxy:8080",
      "https_proxy=http://px-proxy:8080",
    ]);
    expect((probe.command as string[])[6]).toContain("http_get 'http://pypi.org/'");
  });

  it("refuses the kubernetes backend on the Docker component", async () => {
    const mocks = await recordingMocks();
    expect(
      () =>
        new SandboxProject("k", {
          backend: "kubernetes" as never,
          budget: { monthlyCapUsd: 5 },
          templates: { t: { image: "x:1" } },
        }),
    ).toThrow(
      'invalid sandbox project:\n  - backend = "kubernetes": the Docker SandboxProject takes backend "docker" only; use the Kubernetes component for "kubernetes"',
    );
    expect(await mocks.settle()).toEqual([]);
  });

  it("names the project after the component unless told otherwise", async () => {
    const mocks = await recordingMocks();
    const project = new SandboxProject("component-name", {
      name: "team-a",
      budget: { monthlyCapUsd: 5 },
      templates: { t: { image: "x:1" } },
    });
    expect(project.resolved.spec.name).toBe("team-a");
    expect(await outputValue(project.networkName)).toBe("team-a-net");
    await mocks.settle();
  });
});
