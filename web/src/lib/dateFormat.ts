/**
 * Dates as the page shows them, through one `Intl.DateTimeFormat` per locale and style.
 * `toLocaleTimeString(locale, options)` builds a formatter on every call: the history panel's 200
 * rows, drawn again while an answer streamed, spent 1.8 s of a 10 s answer doing so in a
 * conversation of 60 questions.
 */
const STYLES = {
  /** "14:03:07" */
  time: { hour: "2-digit", minute: "2-digit", second: "2-digit" },
  /** "11-28 14:03" (in the locale's order) */
  dayTime: { month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" },
  /** what `toLocaleDateString()` gives */
  date: { year: "numeric", month: "numeric", day: "numeric" },
  /** "14:03" */
  hourMinute: { hour: "2-digit", minute: "2-digit" },
} satisfies Record<string, Intl.DateTimeFormatOptions>;

export type DateStyle = keyof typeof STYLES;

const formats = new Map<string, Intl.DateTimeFormat>();

export function formatDate(date: Date, locale: string, style: DateStyle): string {
  const key = `${locale} ${style}`;
  let format = formats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, STYLES[style]);
    formats.set(key, format);
  }
  return format.format(date);
}
