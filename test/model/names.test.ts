import { describe, expect, it } from "vitest";
import {
  defaultDenyPolicyName,
  egressNetworkName,
  launchSpec,
  limitRangeName,
  podTemplateName,
  probeJobVolumeName,
  probeNetworkName,
  projectNetworkName,
  proxyConfigMapName,
  proxyName,
  proxyPolicyName,
  proxySpec,
  quotaName,
  resolveProject,
  taskContainerName,
  taskJobName,
  taskNetworkName,
  taskServiceAccountName,
  templateEgressPolicyName,
} from "../../components/model";

// Existing deployments carry these names: the runtime and the off switch of a newer version must find them as they are.
describe("object names", () => {
  it("names the Docker objects of a project", () => {
    expect(projectNetworkName("demo")).toBe("demo-net");
    expect(egressNetworkName("demo")).toBe("demo-egress");
    expect(proxyName("demo")).toBe("demo-proxy");
    expect(probeNetworkName("demo", "web")).toBe("demo-probe-web-net");
    expect(probeJobVolumeName("demo", "web")).toBe("demo-probe-web-job");
    expect(taskContainerName("demo", "k2x-a1b2c3")).toBe("demo-task-k2x-a1b2c3");
    expect(taskNetworkName("demo", "k2x-a1b2c3")).toBe("demo-task-k2x-a1b2c3-net");
  });

  it("names the Kubernetes objects of a project", () => {
    expect(quotaName("team")).toBe("team-budget");
    expect(limitRangeName("team")).toBe("team-limits");
    expect(defaultDenyPolicyName("team")).toBe("team-default-deny");
    expect(templateEgressPolicyName("team", "web")).toBe("team-web-egress-proxy");
    expect(proxyPolicyName("team")).toBe("team-proxy-policy");
    expect(proxyConfigMapName("team")).toBe("team-proxy-config");
    expect(taskServiceAccountName("team")).toBe("team-task");
    expect(podTemplateName("team", "web")).toBe("team-web");
    expect(taskJobName("team", "web", "probe")).toBe("team-web-probe");
  });

  it("cuts a Job's name to 63 characters without a trailing -", () => {
    const project = "p".repeat(32);
    const template = `${"t".repeat(29)}-x`;
    // The first 63 characters end at the "-" inside the template's name, which is removed.
    expect(taskJobName(project, template, "id")).toBe(`${project}-${"t".repeat(29)}`);
    expect(taskJobName(project, template, "id")).toHaveLength(62);
  });

  it("names the proxy as tasks resolve it", () => {
    const project = resolveProject({
      name: "demo",
      budget: { monthlyCapUsd: 10 },
      templates: { web: { image: "x:1", egress: { mode: "proxy", allow: ["pypi.org"] } } },
    });
    const network = projectNetworkName("demo");
    expect(proxySpec(project, network)?.name).toBe("demo-proxy");
    expect(launchSpec(project, "web", network).egress.proxyHost).toBe("demo-proxy");
  });
});
