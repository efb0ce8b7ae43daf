/** Where `eventwire dev` listens, and so where `eventwire send` sends, unless told otherwise. */
export const DEFAULT_DEV_PORT = 8787

/** Where `eventwire listen` listens unless told otherwise: the webhook URL of the README's quick start. */
export const DEFAULT_LISTEN_PORT = 8788
