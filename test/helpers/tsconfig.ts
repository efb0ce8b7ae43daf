import ts from 'typescript'

/** A tsconfig file of the repository as the compiler reads it; throws when it cannot be read. */
export function readTsConfig(path: string): ts.ParsedCommandLine {
  const config = ts.getParsedCommandLineOfConfigFile(
    path,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
      },
    },
  )
  if (!config) throw new Error(`${path} could not be read`)
  return config
}
