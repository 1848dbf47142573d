/**
 * Class 11: presets. `scan --preset sandbox` (or `{"preset": "sandbox"}` in the pack config) raises the sandbox's
 * defence-in-depth walls, read-only root first, to mandatory; without the preset the same pod only gets advisories.
 */
import { pod } from "./fixtures";
import { blocked, cases, passes } from "./harness";

const writableRoot = pod("p", {
  securityContext:
    "allowPrivilegeEscalation: false\nreadOnlyRootFilesystem: false\ncapabilities:\n  drop: [ALL]",
});
const RO = blocked("sandbox-require-readonly-rootfs", "p");
const plain = {
  "in/pod.yaml": writableRoot,
  "cfg.json": JSON.stringify({ "sandbox-require-readonly-rootfs": "mandatory" }),
};

cases("class 11: presets", [
  {
    name: "without a preset a writable root is only advisory",
    files: { "in/pod.yaml": writableRoot },
    want: passes,
    paths: ["in"],
  },
  {
    name: "--preset sandbox makes a writable root mandatory",
    files: { "in/pod.yaml": writableRoot },
    args: ["--preset", "sandbox"],
    plain,
    plainArgs: ["--config", "cfg.json"],
    paths: ["in"],
    want: RO,
  },
  {
    name: '{"preset": "sandbox"} in the --config file',
    files: { "in/pod.yaml": writableRoot, "cfg.json": JSON.stringify({ preset: "sandbox" }) },
    args: ["--config", "cfg.json"],
    plain,
    plainArgs: ["--config", "cfg.json"],
    paths: ["in"],
    want: RO,
  },
  {
    name: "--preset sandbox with readOnlyRootFilesystem absent (not just false)",
    files: {
      "in/pod.yaml": pod("p", {
        securityContext: "allowPrivilegeEscalation: false\ncapabilities:\n  drop: [ALL]",
      }),
    },
    args: ["--preset", "sandbox"],
    plain,
    plainArgs: ["--config", "cfg.json"],
    paths: ["in"],
    want: RO,
  },
]);
