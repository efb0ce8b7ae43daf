/** See standard-webhooks-vector.mjs: the Standard Webhooks libraries' signing vector. */
export declare const STANDARD_VECTOR: {
  readonly secret: string
  readonly id: string
  readonly timestamp: string
  readonly body: string
  readonly signature: string
}
