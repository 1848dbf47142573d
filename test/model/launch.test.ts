import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  launchSpec,
  resolveProject,
  TemplateSchema,
  templateHash,
} from "../../components/model";

const base = {
  name: "demo",
  budget: { monthlyCapUsd: 10 },
  templates: { default: { image: "sandbox-busybox:1" } },
};

describe("launchSpec", () => {
  it("decides every wall of a task of the default template", () => {
    const p = resolveProject(base);
    const spec = launchSpec(p, "default", "demo-net");
    expect(spec).toEqual({
      kind: "sandbox.launch/v1",
      project: "demo",
      template: "default",
      specHash: templateHash(p.spec.templates.default as never),
      image: "sandbox-busybox:1",
      command: ["sh", "/job/run.sh"],
      commandWithDeadline: ["timeout", "-s", "KILL", "600", "sh", "/job/run.sh"],
      user: "1000:1000",
      capDrop: ["ALL"],
      capAdd: [],
      noNewPrivileges: true,
      seccomp: "runtime-default",
      readOnlyRoot: true,
      tmpfs: { path: "/tmp", sizeMb: 64 },
      resources: { vcpu: 1, memoryMb: 512, pids: 128, diskMb: 1024 },
      timeoutSeconds: 600,
      restart: "no",
      runtime: "runc",
      network: "none",
      egress: { mode: "none", allow: [] },
      jobFolder: { containerPath: "/job", hostRoot: "/var/lib/sandbox-projects/demo" },
      env: {},
      labels: {
        "sandbox.managed-by": "sandbox-projects",
        "sandbox.project": "demo",
        "sandbox.role": "task",
        "sandbox.spec-hash": templateHash(p.spec.templates.default as never),
        "sandbox.template": "default",
      },
      maxConcurrentTasks: 2,
    });
  });

  it("gives a proxy-mode task a network of its own (with the proxy) and the proxy variables", () => {
    const p = resolveProject({
      ...base,
      templates: {
        web: { image: "x:1", egress: { mode: "proxy", allow: ["pypi.org"] }, env: { LANG: "C" } },
      },
    });
    const spec = launchSpec(p, "web", "demo-net");
    expect(spec.network).toBe("sandbox:per-task");
    expect(spec.egress).toEqual({
      mode: "proxy",
      allow: ["pypi.org"],
      proxy: "http://demo-proxy:3128",
      proxyHost: "demo-proxy",
      proxyPort: 3128,
      projectNetwork: "demo-net",
    });
    expect(spec.labels["sandbox.egress"]).toBe("proxy");
    expect(spec.env).toEqual({
      HTTPS_PROXY: "http://demo-proxy:3128",
      HTTP_PROXY: "http://demo-proxy:3128",
      LANG: "C",
      NO_PROXY: "",
      http_proxy: "http://demo-proxy:3128",
      https_proxy: "http://demo-proxy:3128",
    });
  });

  it("refuses a template the project does not have", () => {
    expect(() => launchSpec(resolveProject(base), "nope", "demo-net")).toThrow(
      'template "nope" is not in project "demo"; it has: default',
    );
  });

  it("hashes a template by content, not by key order", () => {
    const a = TemplateSchema.parse({ image: "x:1", env: { A: "1", B: "2" } });
    const b = TemplateSchema.parse({ env: { B: "2", A: "1" }, image: "x:1" });
    expect(templateHash(a)).toBe(templateHash(b));
    expect(templateHash(a)).not.toBe(templateHash(TemplateSchema.parse({ image: "x:2" })));
    expect(canonicalJson({ b: 1, a: [2, { d: null, c: undefined }] })).toBe('{"a":[2,{"d":null}],"b":1}');
  });
});
