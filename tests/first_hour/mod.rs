//! The first hour: what a newcomer meets: wrong input answered, odd but legal input kept, a drift
//! check that cannot pass by accident, the command line people expect.

mod cli;
mod command_line;
mod input;
mod mistakes;
mod runs;
