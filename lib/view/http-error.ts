/** A request the viewer refuses: the status and a message the page shows as it is. */
export class ViewHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ViewHttpError';
  }
}

export const notFound = (what: string) => new ViewHttpError(404, `${what} does not exist`);
export const badRequest = (message: string) => new ViewHttpError(400, message);
