// The CrossGuard pack: wiring only. Run with `pulumi preview --policy-pack policy`.
import { PolicyPack } from "@pulumi/policy";
import { PACK_NAME, packArgs } from "./pulumi/pack";

new PolicyPack(PACK_NAME, packArgs());
