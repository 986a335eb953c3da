//! placeholder until implemented
