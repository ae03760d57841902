/**
 * Zod 4 schemas as contracts, without importing Zod: the schema brings its
 * own `toJSONSchema`, and its definition tree is read for what that method
 * drops without a word.
 */
import type { ContractMistake } from "../native";
/** A Zod 4 schema, as far as vouch reads it (structural: no import of zod). */
export interface ZodLike {
    readonly _zod: {
        readonly output: unknown;
        readonly def: unknown;
    };
    toJSONSchema(params?: Record<string, unknown>): unknown;
}
/** The type a Zod 4 schema parses to (`z.output<S>`, which `z.infer` is). */
export type ZodOutput<S> = S extends {
    readonly _zod: {
        readonly output: infer O;
    };
} ? O : unknown;
/**
 * Every place in the schema where Zod would check something the exported
 * JSON Schema does not say, with the path of the value it applies to
 * (`/*` for each item or member). Walked with an explicit stack, each schema
 * once (recursive `z.lazy` schemas end).
 */
export declare function unsaid(root: ZodLike): ContractMistake[];
/** The document of a Zod schema's contract, or why there is none. */
export declare function fromZodSchema(schema: ZodLike): {
    document: string;
} | {
    mistakes: ContractMistake[];
};
