// Whether a link is a web page (http or https): the only links the extension hands to the system's opener, as a link from a thread, a pull request or a review could name anything (a file, a program, a command URI).

export function isWebAddress(link: string): boolean {
  return /^https?:\/\/[^\s]/i.test(link);
}
