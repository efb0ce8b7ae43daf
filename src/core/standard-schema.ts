/**
 * A schema of any library that implements Standard Schema v1 (Zod 4, Valibot 1, ArkType 2 and
 * others): the one member the client reads, `~standard`, described here in the library's own
 * words so that it depends on no schema package.
 *
 * @typeParam Input - What the schema accepts: the type a planned call takes.
 * @typeParam Output - What it gives back: what is sent (a schema may default or normalize values).
 */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown) => SchemaResult<Output> | Promise<SchemaResult<Output>>
    readonly types?: { readonly input: Input; readonly output: Output } | undefined
  }
}

/** What a {@link StandardSchema} says about a value: the value it gives back, or what is wrong. */
export type SchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly SchemaIssue[] }

/** One thing a schema found wrong, and where (`path`: keys from the checked object down). */
export interface SchemaIssue {
  readonly message: string
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
}
