// The CrossGuard pack: every rule of @sandbox-projects/toolkit at its default level. Levels, settings and
// exemptions come from `--policy-pack-config <file>` (its schema: config.schema.json beside this file). A pack of
// your own selection is `new PolicyPack(name, packArgs({ preset, only, exclude }))` from "@sandbox-projects/toolkit/policy".
require("@sandbox-projects/toolkit/pack");
