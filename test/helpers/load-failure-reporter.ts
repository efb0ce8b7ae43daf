import type { Reporter, Vitest } from 'vitest/node'

type FileTask = ReturnType<Vitest['state']['getFiles']>[number]

/**
 * Turns a test file that failed to load into a failed test, for StrykerJS.
 *
 * A mutant in module-level code (a table of address ranges built at import) can make the module
 * throw while loading. Vitest then reports an error on the file and runs no test in it, and
 * Stryker's vitest runner, which reads only test results, scores the mutant as survived
 * (stryker-js#6150). Adding one failed test per such file lets Stryker see the failure it caused.
 */
export class LoadFailureReporter implements Reporter {
  #vitest: Vitest | undefined

  onInit(vitest: Vitest): void {
    this.#vitest = vitest
  }

  onTestRunEnd(): void {
    for (const file of this.#vitest?.state.getFiles() ?? []) {
      const errors = file.result?.errors ?? []
      if (file.result?.state !== 'fail' || errors.length === 0) continue
      file.tasks.push({
        type: 'test',
        id: `${file.id}_load`,
        name: `${file.name} failed to load`,
        fullName: `${file.name} failed to load`,
        mode: 'run',
        file,
        meta: {},
        annotations: [],
        artifacts: [],
        timeout: 0,
        result: { state: 'fail', errors },
      } as unknown as FileTask['tasks'][number])
    }
  }
}
